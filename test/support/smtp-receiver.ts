import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

export interface ReceivedMail {
  from: string;
  to: string[];
  /** The whole message as sent (headers and MIME parts). */
  raw: string;
  header(name: string): string | null;
}

/**
 * A real SMTP server on loopback (smtp-server) that keeps every message. `down` makes it refuse
 * every message with a temporary failure, as a relay that is unavailable does.
 */
export interface SmtpReceiver {
  url: string;
  mails: ReceivedMail[];
  down: boolean;
  /** Messages refused while down. */
  refused: number;
  close(): Promise<void>;
}

export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const receiver: SmtpReceiver = {
    url: "",
    mails: [],
    down: false,
    refused: 0,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        if (receiver.down) {
          receiver.refused++;
          const error = Object.assign(new Error("relay unavailable, try again later"), { responseCode: 451 });
          return callback(error);
        }
        const raw = Buffer.concat(chunks).toString("utf8");
        const headerBlock = raw.split(/\r?\n\r?\n/, 1)[0]!.replace(/\r?\n[ \t]+/g, " ");
        receiver.mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          raw,
          header(name) {
            const match = new RegExp(`^${name}:\\s*(.*)$`, "im").exec(headerBlock);
            return match ? match[1]!.trim() : null;
          },
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  receiver.url = `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
  return receiver;
}
