import http from "node:http";
import https from "node:https";
import { Webhook } from "standardwebhooks";
import { checkEndpointUrl, publicOnlyLookup } from "./address-guard.js";

export interface SendLimits {
  timeoutMs: number;
  maxResponseBytes: number;
  allowPrivate: boolean;
}

export interface SendOutcome {
  ok: boolean;
  status: number | null;
  /** What went wrong, for the delivery log: never the secret, at most 500 characters. */
  error: string | null;
}

/**
 * One signed attempt (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature). Bounded
 * in time from connecting to the end of the answer, and in the bytes of the answer read: a slow or
 * huge answer costs one attempt its timeout, never a worker. Redirects are not followed (a 3xx is a
 * failure): following one would reach an address nobody checked.
 */
export async function sendWebhook(
  endpointUrl: string,
  secret: string,
  message: { id: string; body: string },
  limits: SendLimits,
  now: Date = new Date(),
): Promise<SendOutcome> {
  let url: URL;
  try {
    url = checkEndpointUrl(endpointUrl, limits.allowPrivate);
  } catch (error) {
    return { ok: false, status: null, error: describe(error) };
  }
  const signature = new Webhook(secret).sign(message.id, now, message.body);
  const headers = {
    "content-type": "application/json",
    "user-agent": "dmarc-ledger-webhooks/1",
    "webhook-id": message.id,
    "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
    "webhook-signature": signature,
    "content-length": String(Buffer.byteLength(message.body)),
  };
  const transport = url.protocol === "https:" ? https : http;
  return new Promise<SendOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: SendOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const request = transport.request(
      url,
      { method: "POST", headers, lookup: publicOnlyLookup(limits.allowPrivate), agent: false },
      (response) => {
        const status = response.statusCode ?? 0;
        const ok = status >= 200 && status < 300;
        const kept: Buffer[] = [];
        let size = 0;
        const done = (cut: boolean) => {
          const text = Buffer.concat(kept).toString("utf8").slice(0, 500);
          finish({
            ok,
            status,
            error: ok ? null : `HTTP ${status}${text ? `: ${text}` : ""}${cut ? " (answer cut off)" : ""}`,
          });
          request.destroy();
        };
        response.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > limits.maxResponseBytes) {
            kept.push(chunk.subarray(0, Math.max(0, limits.maxResponseBytes - (size - chunk.length))));
            done(true);
            return;
          }
          kept.push(chunk);
        });
        response.on("end", () => done(false));
        response.on("error", (error) => finish({ ok: false, status, error: describe(error) }));
      },
    );
    const timer = setTimeout(() => {
      finish({ ok: false, status: null, error: `no complete answer within ${limits.timeoutMs} ms` });
      request.destroy();
    }, limits.timeoutMs);
    request.on("error", (error) => finish({ ok: false, status: null, error: describe(error) }));
    request.end(message.body);
  });
}

function describe(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 500);
}
