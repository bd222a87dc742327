import http from "node:http";
import https from "node:https";
import { Webhook } from "standardwebhooks";
import { checkEndpointUrl, publicOnlyLookup, RefusedAddressError } from "./address-guard.js";

export interface SendLimits {
  timeoutMs: number;
  maxResponseBytes: number;
  allowPrivate: boolean;
}

/**
 * Why an attempt failed, as the delivery log says it to the tenant: a category, never a receiver's
 * answer, an error's text or an address the name resolved to (a tenant must not learn what our
 * network holds). `http_status N` for an answer that is not 2xx (3xx included: no redirect is
 * followed).
 */
export type FailureCategory =
  | "timeout"
  | "refused"
  | "dns"
  | "tls"
  | "not_public"
  | "bad_url"
  | "connection"
  | `http_status ${number}`;

export interface SendOutcome {
  ok: boolean;
  status: number | null;
  /** Why it failed (FailureCategory); null when delivered. */
  error: FailureCategory | null;
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
    return { ok: false, status: null, error: categoryOf(error) };
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
        // The status is the whole answer we need: a 2xx is the receiver's acceptance, whatever its
        // body does next (a timeout while it streams must not turn an accepted delivery into a
        // retry), and no body is kept. The connection is closed at once.
        finish({ ok, status, error: ok ? null : `http_status ${status}` });
        request.destroy();
      },
    );
    // Checked after the I/O the event loop has waiting: when the loop was held past the timeout
    // (a long synchronous task), timers run before I/O, and an answer that came in time would
    // lose to its own timeout, and be sent again later: a duplicate the receiver answered twice.
    const timer = setTimeout(
      () =>
        setImmediate(() => {
          finish({ ok: false, status: null, error: "timeout" });
          request.destroy();
        }),
      limits.timeoutMs,
    );
    request.on("error", (error) => finish({ ok: false, status: null, error: categoryOf(error) }));
    request.end(message.body);
  });
}

const dnsCodes = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_FAIL", "EAI_NONAME", "ENODATA", "ESERVFAIL"]);

/** The category of an attempt's error (FailureCategory). */
export function categoryOf(error: unknown): FailureCategory {
  if (error instanceof RefusedAddressError)
    return error.message.includes("public") ? "not_public" : "bad_url";
  const code = String((error as NodeJS.ErrnoException | undefined)?.code ?? "");
  if (code === "ECONNREFUSED") return "refused";
  if (dnsCodes.has(code)) return "dns";
  if (
    code.startsWith("ERR_TLS") ||
    code.startsWith("ERR_SSL") ||
    code.startsWith("CERT_") ||
    code.includes("CERT") ||
    code === "EPROTO" ||
    code === "UNABLE_TO_VERIFY_LEAF_SIGNATURE"
  )
    return "tls";
  if (code === "ETIMEDOUT") return "timeout";
  return "connection";
}
