import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import type { IngestOutcome, InputBytes } from "@dmarc-ledger/intake";
import pLimit from "p-limit";
import type { Logger } from "pino";
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from "smtp-server";
import { describeOutcome } from "./describe-outcome.js";
import type { SmtpSettings } from "./smtp-settings.js";
import { MessageTooLargeError, spoolMessage } from "./spool.js";

/**
 * Stores one received message durably and says what it held. The SMTP server answers 250 only
 * after this resolves, and 451 when it throws. Injected so that every channel can go through the
 * same intake step (today `ingest`).
 */
export type DeliverMessage = (input: InputBytes, source: string) => Promise<IngestOutcome>;

export interface SmtpIntakeOptions {
  settings: SmtpSettings;
  deliver: DeliverMessage;
  logger: Logger;
}

export interface RunningSmtpIntake {
  host: string;
  port: number;
  /** Stops accepting, lets messages being received finish (up to the close timeout), then closes. */
  stop(): Promise<void>;
}

/** An SMTP reply carried by an error, as smtp-server expects it. */
function reply(responseCode: number, message: string): Error & { responseCode: number } {
  return Object.assign(new Error(message), { responseCode });
}

/**
 * The report inbox: accepts mail for the report addresses and postmaster only (never a relay), refuses larger
 * messages than SIZE, spools each message to disk as it arrives and answers 250 once it is stored.
 */
export async function startSmtpIntake(options: SmtpIntakeOptions): Promise<RunningSmtpIntake> {
  const { settings, deliver, logger } = options;
  const spoolDir = settings.spoolDir ?? (await mkdtemp(join(tmpdir(), "dmarc-ledger-smtp-")));
  // RFC 5321 §4.5.1: a domain that takes mail takes postmaster's, with or without the domain
  // (§4.1.1.3). What it holds goes through the intake like any message: a mail that carries no
  // report (a bounce, an abuse complaint) is kept, with the reason, among the rejected inputs.
  const acceptedAddresses = new Set([
    ...settings.reportAddresses,
    `postmaster@${settings.reportsDomain}`,
    "postmaster",
  ]);
  // Messages stored at once: each is parsed on a parse worker, then committed, and messages that
  // reach the commit together share one transaction (group commit). Four keep a parse worker and
  // the database busy at once: 640 corpus-mix mails over 4 connections, 65% of parse-only with 4
  // against 48% with 2 (pnpm bench intake). Connections keep receiving meanwhile; only storing queues.
  const storing = pLimit(settings.maxConcurrentDeliveries);
  const connectionsByIp = new Map<string, number>();
  const ipBySession = new Map<string, string>();
  /** Every DATA phase under way, from its first byte to its reply. */
  const transactions = new Set<Promise<void>>();
  let receiving = 0;
  /** Sessions whose message is received and being stored: their reply must not be cut off. */
  const delivering = new Set<string>();
  let stopping = false;

  const server: SMTPServer = new SMTPServer({
    name: hostname(),
    banner: "dmarc-ledger report intake",
    size: settings.maxMessageBytes,
    rejectOversized: true,
    maxClients: settings.maxConnections,
    maxRecipients: settings.maxRecipients,
    socketTimeout: settings.socketTimeoutMs,
    closeTimeout: Math.max(1, settings.closeTimeoutMs),
    // Senders are other mail servers delivering to our addresses: there is no one to log in.
    disabledCommands: settings.tls ? ["AUTH"] : ["AUTH", "STARTTLS"],
    ...(settings.tls ? { key: settings.tls.key, cert: settings.tls.cert } : {}),
    disableReverseLookup: true,
    logger: false,

    onConnect(session, callback) {
      if (stopping) return callback(reply(421, "shutting down, try again later"));
      const ip = session.remoteAddress;
      const open = connectionsByIp.get(ip) ?? 0;
      if (open >= settings.maxConnectionsPerIp) {
        logger.warn({ ip, open }, "SMTP connection refused: too many from this address");
        return callback(reply(421, "too many connections from your address, try again later"));
      }
      connectionsByIp.set(ip, open + 1);
      ipBySession.set(session.id, ip);
      callback();
    },

    onClose(session) {
      const ip = ipBySession.get(session.id);
      if (ip === undefined) return;
      ipBySession.delete(session.id);
      const open = (connectionsByIp.get(ip) ?? 1) - 1;
      if (open <= 0) connectionsByIp.delete(ip);
      else connectionsByIp.set(ip, open);
    },

    onMailFrom(_address, _session, callback) {
      if (stopping) return callback(reply(421, "shutting down, try again later"));
      callback();
    },

    onRcptTo(address, _session, callback) {
      if (!acceptedAddresses.has(address.address.toLowerCase())) {
        return callback(reply(550, `no such report address here: <${address.address}>`));
      }
      callback();
    },

    onData(stream, session, callback) {
      receiving++;
      const transaction = receiveMessage(stream, session)
        .then(
          (message) => callback(null, message),
          (error: Error) => callback(error),
        )
        .finally(() => transactions.delete(transaction));
      transactions.add(transaction);
    },
  });

  async function receiveMessage(stream: SMTPServerDataStream, session: SMTPServerSession): Promise<string> {
    const started = Date.now();
    const envelope = {
      session: session.id,
      ip: session.remoteAddress,
      from: session.envelope.mailFrom ? session.envelope.mailFrom.address : null,
      to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
    };
    // A client that trickles its message in stays under the idle timeout; this bounds the whole.
    const dataTimer = setTimeout(() => {
      logger.warn({ ...envelope }, "SMTP DATA took too long; closing the connection");
      closeConnection(session.id, "4.4.2 message took too long to arrive");
    }, settings.dataTimeoutMs);
    let spooled: Awaited<ReturnType<typeof spoolMessage>>;
    try {
      spooled = await spoolMessage(stream, spoolDir, settings.maxMessageBytes);
    } catch (error) {
      if (error instanceof MessageTooLargeError) {
        logger.info({ ...envelope, limit: error.limit }, "SMTP message refused: over the size limit");
        throw reply(552, `message exceeds ${error.limit} bytes`);
      }
      logger.info({ ...envelope, err: error }, "SMTP message not received in full");
      throw reply(451, "message not received in full, try again");
    } finally {
      clearTimeout(dataTimer);
      receiving--;
    }
    const source = `smtp:${spooled.messageId ?? `${session.id}.${session.transaction}`}`;
    delivering.add(session.id);
    try {
      const outcome = await storing(() => deliver(spooled.input, source));
      const summary = describeOutcome(outcome);
      logger.info(
        { ...envelope, source, bytes: spooled.bytes, ms: Date.now() - started, items: outcome.items },
        `SMTP message stored: ${summary}`,
      );
      return `OK: ${summary}`;
    } catch (error) {
      logger.error({ ...envelope, source, err: error }, "SMTP message could not be stored; answered 451");
      throw reply(451, "4.3.0 temporary failure storing the message, try again later");
    } finally {
      delivering.delete(session.id);
      await spooled.discard();
    }
  }

  function closeConnection(sessionId: string, message: string): void {
    for (const connection of server.connections) {
      if (connection.id === sessionId) {
        connection.send(421, message);
        connection.close();
      }
    }
  }

  server.on("error", (error) => logger.warn({ err: error }, "SMTP connection error"));
  await new Promise<void>((resolve, reject) => {
    const listener = server.listen(settings.port, settings.host);
    listener.once("listening", resolve);
    listener.once("error", reject);
  });
  const address = server.server.address() as AddressInfo;
  logger.info(
    { host: address.address, port: address.port, addresses: settings.reportAddresses, tls: !!settings.tls },
    "SMTP intake listening",
  );

  return {
    host: address.address,
    port: address.port,
    async stop() {
      stopping = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Messages being received may finish, up to the close timeout; idle sessions need not wait.
      const deadline = Date.now() + settings.closeTimeoutMs;
      while (receiving > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const closeAll = (keep: (sessionId: string) => boolean) => {
        for (const connection of [...server.connections]) {
          if (keep(connection.id)) continue;
          connection.send(421, "shutting down, try again later");
          connection.close();
        }
      };
      closeAll((id) => delivering.has(id));
      // Messages already received are stored and answered before the store is closed.
      await Promise.allSettled([...transactions]);
      closeAll(() => false);
      await closed;
      if (!settings.spoolDir) await rm(spoolDir, { recursive: true, force: true });
    },
  };
}
