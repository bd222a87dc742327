import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** Whether the receiver answered 2xx to this attempt. */
  accepted: boolean;
  /** What standardwebhooks' verifier said with the endpoint's secret (null before a secret is set). */
  verified: boolean | null;
}

/**
 * A real HTTP receiver on loopback that records every attempt and verifies each with the
 * standardwebhooks library. `answer` decides each answer (a status, or "hang" to never answer,
 * or "huge" for a 2xx with an endless body).
 */
export interface WebhookReceiver {
  url: string;
  attempts: ReceivedWebhook[];
  secret: string | null;
  answer: (request: IncomingMessage) => number | "hang" | "huge";
  /** How long each answer waits (a slow receiver). */
  delayMs: number;
  /** Ids answered 2xx, each once. */
  acceptedIds(): Set<string>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const receiver: WebhookReceiver = {
    url: "",
    attempts: [],
    secret: null,
    answer: () => 204,
    delayMs: 0,
    acceptedIds: () => new Set(receiver.attempts.filter((a) => a.accepted).map((a) => a.id)),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const headers = {
        "webhook-id": String(request.headers["webhook-id"] ?? ""),
        "webhook-timestamp": String(request.headers["webhook-timestamp"] ?? ""),
        "webhook-signature": String(request.headers["webhook-signature"] ?? ""),
      };
      let verified: boolean | null = null;
      if (receiver.secret) {
        try {
          new Webhook(receiver.secret).verify(body, headers);
          verified = true;
        } catch {
          verified = false;
        }
      }
      const answer = receiver.answer(request);
      receiver.attempts.push({
        id: headers["webhook-id"],
        timestamp: headers["webhook-timestamp"],
        signature: headers["webhook-signature"],
        body,
        accepted: typeof answer === "number" ? answer >= 200 && answer < 300 : answer === "huge",
        verified,
      });
      if (answer === "hang") return;
      if (answer === "huge") {
        response.writeHead(200, { "content-type": "text/plain" });
        const block = Buffer.alloc(64 * 1024, 120);
        const pump = () => {
          while (response.write(block)) {}
          response.once("drain", pump);
        };
        response.on("close", () => response.removeAllListeners("drain"));
        pump();
        return;
      }
      const reply = () => response.writeHead(answer).end(answer >= 400 ? "not now" : "");
      if (receiver.delayMs > 0) setTimeout(reply, receiver.delayMs);
      else reply();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return receiver;
}

/** Waits until `done` holds, polling; fails with `what` after `timeoutMs`. */
export async function eventually(
  done: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
