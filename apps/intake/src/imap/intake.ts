import { rootCertificates } from "node:tls";
import { bytesInput, type IngestOutcome, type InputBytes } from "@dmarc-ledger/intake";
import { ImapFlow } from "imapflow";
import type { Logger } from "pino";
import { classifyOutcome, type MessageDisposition } from "./classify.js";
import type { ImapProgressStore } from "./progress.js";
import { describeImap, type ImapSettings } from "./settings.js";
import { Wakeup } from "./wakeup.js";

/** Hands one input to the intake (receiveInput); resolves once what it held is durably stored. */
export type DeliverInput = (input: InputBytes, source: string) => Promise<IngestOutcome>;

export interface HandledMessage {
  uid: number;
  source: string;
  disposition: MessageDisposition | "too_large";
  outcome: IngestOutcome | null;
}

export interface ImapIntakeOptions {
  settings: ImapSettings;
  deliver: DeliverInput;
  progress: ImapProgressStore;
  logger: Logger;
  /** Reconnect delays: doubling from initialMs up to maxMs. Defaults 1 s and 60 s. */
  backoff?: { initialMs: number; maxMs: number };
  /** Told after each message was delivered and moved (for metrics and tests). */
  onMessageHandled?: (message: HandledMessage) => void;
}

export interface ImapIntake {
  /** Finishes the message in hand (delivered and moved), then logs out. */
  stop(): Promise<void>;
}

const stopGraceMs = 5000;

class ConnectionLost extends Error {
  override readonly name = "ConnectionLost";
}

/**
 * Reads reports from an IMAP folder until stopped: each new message (by UID) is delivered to
 * the intake, then moved to the processed, invalid or not-a-report folder, then its UID is recorded.
 * A crash between delivery and the move delivers the message again on the next run, which
 * the intake recognises as a duplicate; a crash between the move and the record finds the message
 * gone. Waits with IDLE where the server offers it, else polls; reconnects with capped exponential
 * backoff after the connection drops.
 */
export async function startImapIntake(options: ImapIntakeOptions): Promise<ImapIntake> {
  const { settings, logger } = options;
  const log = logger.child({ channel: "imap", mailbox: describeImap(settings) });
  const backoff = options.backoff ?? { initialMs: 1000, maxMs: 60_000 };
  // Only stop() ends a backoff sleep early; a session's wakeup also hears its own connection.
  const stopped = new Wakeup();
  let sessionWakeup: Wakeup | null = null;
  let sessionClient: ImapFlow | null = null;
  /** True while a message is between delivery and its move: stop() lets that finish. */
  let handling = false;
  let stopping = false;
  let failures = 0;

  const run = async () => {
    while (!stopping) {
      try {
        await session(() => {
          failures = 0;
        });
      } catch (error) {
        if (stopping) break;
        const delayMs = Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(failures, 30));
        failures++;
        log.warn({ err: describeError(error), delayMs, failures }, "IMAP intake failed; reconnecting");
        await stopped.sleep(delayMs);
      }
    }
  };

  /** One connection, from login until it drops (throws) or the intake stops (returns). */
  const session = async (onReady: () => void) => {
    const { connection } = settings;
    const client = new ImapFlow({
      host: connection.host,
      port: connection.port,
      secure: connection.secure,
      ...(connection.requireStartTls ? { doSTARTTLS: true } : {}),
      ...(connection.ca ? { tls: { ca: [...rootCertificates, connection.ca.toString("utf8")] } } : {}),
      auth: { user: connection.user, pass: connection.password },
      logger: false,
      connectionTimeout: 30_000,
      greetingTimeout: 16_000,
      socketTimeout: 5 * 60_000,
      // A message over the limit is never fetched whole; this bounds what a broken server can send.
      maxResponseSize: settings.maxMessageBytes + 1024 * 1024,
      // IDLE (the only way to hear of new mail at once) starts this long after our last command;
      // the default, 15 s, would delay every new report by as much.
      autoIdleDelay: 500,
    });
    let closed = false;
    const wakeup = new Wakeup();
    sessionWakeup = wakeup;
    sessionClient = client;
    client.on("error", (error: unknown) => {
      log.warn({ err: describeError(error) }, "IMAP connection error");
    });
    client.on("close", () => {
      closed = true;
      wakeup.wake();
    });
    client.on("exists", () => wakeup.wake());
    try {
      await client.connect();
      await ensureFolders(client, settings);
      const mailbox = await client.mailboxOpen(settings.folder);
      const idle = client.capabilities.has("IDLE");
      log.info(
        { mode: idle ? "idle" : "poll", pollIntervalMs: settings.pollIntervalMs, messages: mailbox.exists },
        "IMAP intake connected",
      );
      onReady();
      while (!stopping) {
        // The server may announce a new UIDVALIDITY while the folder is open.
        await processNewMessages(client, client.mailbox ? client.mailbox.uidValidity : mailbox.uidValidity);
        if (stopping) break;
        // With IDLE the server tells us of new mail ("exists"); the interval is then only a safety net.
        await wakeup.sleep(idle ? settings.pollIntervalMs * 10 : settings.pollIntervalMs);
        if (closed) throw new ConnectionLost("the server closed the connection");
      }
      await client.logout().catch(() => client.close());
    } catch (error) {
      client.close();
      throw error;
    }
  };

  const progressKey = () => {
    const { connection } = settings;
    return `${connection.user}@${connection.host}:${connection.port}/${settings.folder}`;
  };

  const processNewMessages = async (client: ImapFlow, uidValidity: bigint) => {
    const key = progressKey();
    const saved = await options.progress.load(key);
    let lastUid = saved !== null && saved.uidValidity === uidValidity ? saved.lastUid : 0;
    if (saved !== null && saved.uidValidity !== uidValidity) {
      log.warn(
        { before: String(saved.uidValidity), now: String(uidValidity) },
        "UIDVALIDITY changed; rescanning",
      );
    }
    // "n:*" always matches the newest message, even below n: hence the filter.
    const found = (await client.search({ uid: `${lastUid + 1}:*` }, { uid: true })) || [];
    const uids = found.filter((uid) => uid > lastUid).sort((a, b) => a - b);
    for (const uid of uids) {
      if (stopping) return;
      handling = true;
      const handled = await handleMessage(client, uid, uidValidity).finally(() => {
        handling = false;
      });
      if (handled) {
        lastUid = uid;
        await options.progress.save(key, { uidValidity, lastUid });
        options.onMessageHandled?.(handled);
      }
    }
  };

  const handleMessage = async (
    client: ImapFlow,
    uid: number,
    uidValidity: bigint,
  ): Promise<HandledMessage | null> => {
    const head = await client.fetchOne(String(uid), { size: true, envelope: true }, { uid: true });
    if (!head) return null; // expunged by someone else meanwhile
    const messageId = head.envelope?.messageId?.replace(/^<|>$/g, "");
    const source = messageId ? `imap:${messageId}` : `imap:${settings.folder}/${uidValidity}/${uid}`;
    if ((head.size ?? 0) > settings.maxMessageBytes) {
      // Kept in the mailbox, where a person can look at it; fetching it could exhaust our memory.
      log.warn(
        { uid, source, bytes: head.size, limit: settings.maxMessageBytes },
        "message too large; moved aside",
      );
      await move(client, uid, settings.invalidFolder);
      return { uid, source, disposition: "too_large", outcome: null };
    }
    const message = await client.fetchOne(String(uid), { source: true }, { uid: true });
    if (message === false || message.source === undefined) return null;
    const outcome = await options.deliver(bytesInput(new Uint8Array(message.source)), source);
    const disposition = classifyOutcome(outcome);
    const folder = {
      processed: settings.processedFolder,
      invalid: settings.invalidFolder,
      not_report: settings.notReportFolder,
    }[disposition];
    await move(client, uid, folder);
    log.info(
      {
        uid,
        source,
        disposition,
        items: outcome.items.map((item) =>
          item.kind === "rejected"
            ? { kind: item.kind, code: item.code }
            : item.kind === "aggregate" && item.dropped.length > 0
              ? { kind: item.kind, status: item.status, dropped: item.dropped }
              : { kind: item.kind, status: item.status },
        ),
      },
      "IMAP message handled",
    );
    return { uid, source, disposition, outcome };
  };

  const move = async (client: ImapFlow, uid: number, folder: string) => {
    const moved = await client.messageMove(String(uid), folder, { uid: true });
    if (moved === false) throw new Error(`could not move message ${uid} to "${folder}"`);
  };

  const running = run();
  return {
    async stop() {
      stopping = true;
      stopped.wake();
      sessionWakeup?.wake();
      // A connect or a command that hangs must not hold up the stop for long; a message in hand may.
      const impatience = setTimeout(() => {
        if (!handling) sessionClient?.close();
      }, stopGraceMs);
      await running;
      clearTimeout(impatience);
      log.info("IMAP intake stopped");
    },
  };
}

async function ensureFolders(client: ImapFlow, settings: ImapSettings): Promise<void> {
  const existing = new Set((await client.list()).map((entry) => entry.path));
  for (const folder of [settings.processedFolder, settings.invalidFolder, settings.notReportFolder]) {
    if (!existing.has(folder)) await client.mailboxCreate(folder);
  }
}

/** Error text for logs: IMAP errors carry the server's answer, never our credentials. */
function describeError(error: unknown): { message: string; code?: string; response?: string } {
  if (!(error instanceof Error)) return { message: String(error) };
  const details = error as Error & { code?: unknown; responseText?: unknown };
  return {
    message: error.message,
    ...(typeof details.code === "string" ? { code: details.code } : {}),
    ...(typeof details.responseText === "string" ? { response: details.responseText } : {}),
  };
}
