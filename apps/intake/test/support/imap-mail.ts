import { readFile } from "node:fs/promises";
import { ImapFlow } from "imapflow";
import MailComposer from "nodemailer/lib/mail-composer/index.js";
import { parsedmarcCorpus } from "../../../../test/support/corpus.js";
import type { TestDovecot } from "./dovecot.js";

/** The intake's default folders (IMAP_PROCESSED_FOLDER, IMAP_INVALID_FOLDER, IMAP_NOT_REPORT_FOLDER). */
export const folders = { processed: "DMARC Processed", invalid: "DMARC Invalid", notReport: "Not DMARC" };

export const parsedmarcDir = parsedmarcCorpus;

export function corpusFile(relative: string): Promise<Buffer> {
  return readFile(`${parsedmarcDir}${relative}`);
}

/** A mail as a reporter sends it: a short text and the report as an attachment. */
export function reportMail(
  filename: string,
  content: Buffer,
  subject = `Report ${filename}`,
): Promise<Buffer> {
  return compose({
    from: "noreply-dmarc@reporter.example",
    to: "dmarc@example.com",
    subject,
    text: "This is a DMARC aggregate report.",
    attachments: [{ filename, content }],
  });
}

export function compose(options: ConstructorParameters<typeof MailComposer>[0]): Promise<Buffer> {
  return new MailComposer(options).compile().build();
}

/** A real IMAP client on the test server: puts mail in and looks at folders. */
export async function openMailbox(dovecot: TestDovecot): Promise<ImapFlow> {
  const client = new ImapFlow({
    host: dovecot.host,
    port: dovecot.port,
    secure: false,
    auth: { user: dovecot.user, pass: dovecot.password },
    logger: false,
    // The test's own client, on loopback: it takes the test server's self-signed certificate.
    tls: { rejectUnauthorized: false },
  });
  client.on("error", () => {});
  await client.connect();
  return client;
}

export async function append(dovecot: TestDovecot, folder: string, mails: Buffer[]): Promise<void> {
  const client = await openMailbox(dovecot);
  try {
    for (const mail of mails) await client.append(folder, mail);
  } finally {
    await client.logout();
  }
}

/** Subjects of the messages in each folder (a missing folder counts as empty). */
export async function folderSubjects(
  dovecot: TestDovecot,
  folders: string[],
): Promise<Record<string, string[]>> {
  const client = await openMailbox(dovecot);
  try {
    const existing = new Set((await client.list()).map((entry) => entry.path));
    const result: Record<string, string[]> = {};
    for (const folder of folders) {
      result[folder] = [];
      if (!existing.has(folder)) continue;
      const lock = await client.getMailboxLock(folder);
      try {
        if (client.mailbox && client.mailbox.exists > 0) {
          for await (const message of client.fetch("1:*", { envelope: true })) {
            result[folder].push(message.envelope?.subject ?? "");
          }
        }
      } finally {
        lock.release();
      }
      result[folder].sort();
    }
    return result;
  } finally {
    await client.logout();
  }
}
