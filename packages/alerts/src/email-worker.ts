import { createHash } from "node:crypto";
import type { AlertRaised } from "@dmarc-ledger/events";
import type { DataKeys } from "@dmarc-ledger/personal-data";
import { type UsersSchema, userEmails } from "@dmarc-ledger/users";
import { type Kysely, sql } from "kysely";
import nodemailer from "nodemailer";
import { alertMail } from "./alert-mail.js";
import { retryDelay } from "./backoff.js";
import type { AlertsSchema } from "./schema.js";

export interface EmailWorkerOptions {
  db: Kysely<AlertsSchema>;
  /** Opens the address of the person a mail goes to, when it is sent (it is stored sealed only). */
  dataKeys: DataKeys;
  smtpUrl: string;
  from: string;
  /** Where people reach the dashboard: each mail links to the view of its figures. */
  dashboardUrl: string;
  retryBaseMs: number;
  retryMaxMs: number;
  timeoutMs: number;
  pollMs?: number;
  onError?: (error: unknown) => void;
}

export interface RunningEmailWorker {
  wake(): void;
  stop(): Promise<void>;
}

interface PendingDigest {
  digest_id: string;
  tenant_id: string;
  user_id: string;
  attempts: number;
  subject: string;
  text: string;
  html: string;
}

interface PendingMail {
  email_id: string;
  tenant_id: string;
  user_id: string;
  attempts: number;
  payload: string;
}

/** A row of one of the two mail outboxes. */
interface OutboxRow {
  table: "alert_email" | "alert_digest";
  idColumn: "email_id" | "digest_id";
  id: string;
}
const mailRow = (id: string): OutboxRow => ({ table: "alert_email", idColumn: "email_id", id });
const digestRow = (id: string): OutboxRow => ({ table: "alert_digest", idColumn: "digest_id", id });

/**
 * Sends the alert mail, then the digests, through the relay, one message at a time (a relay is one connection, and
 * alert mail is rare). A relay that is down or refuses leaves the mail pending for a retry later,
 * backing off as the webhooks do; the mail is leased while it is sent, like a delivery.
 */
export function startEmailWorker(options: EmailWorkerOptions): RunningEmailWorker {
  const { db } = options;
  const transport = nodemailer.createTransport(options.smtpUrl, {
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: options.timeoutMs,
  } as never);
  const leaseMs = options.timeoutMs * 3 + 10_000;
  let stopping = false;
  let wakeUp: (() => void) | null = null;

  const claim = async (): Promise<PendingMail | undefined> => {
    const now = new Date();
    const result = await sql<PendingMail>`
      update alert_email m set lease_until = ${new Date(now.getTime() + leaseMs)}
      from alert_outbox o
      where o.alert_id = m.alert_id and m.email_id = (
        select email_id from alert_email
        where status = 'pending' and next_attempt_at <= ${now}
          and (lease_until is null or lease_until < ${now})
        order by next_attempt_at limit 1
        for update skip locked
      )
      returning m.email_id, m.tenant_id, m.user_id, m.attempts, o.payload`.execute(db);
    return result.rows[0];
  };

  /**
   * The address of the person a mail goes to, opened now; undefined when they are no longer of
   * the tenant or their key is gone (erased): their mail is then dropped, not sent.
   */
  const recipient = async (row: OutboxRow, tenantId: string, userId: string) => {
    const users = db as unknown as Kysely<UsersSchema>;
    const member = await users
      .selectFrom("user_role")
      .select("user_id")
      .where("tenant_id", "=", tenantId)
      .where("user_id", "=", userId)
      .executeTakeFirst();
    const address = member ? (await userEmails(users, options.dataKeys, [userId])).get(userId) : undefined;
    if (address === undefined)
      await sql`delete from ${sql.table(row.table)} where ${sql.ref(row.idColumn)} = ${row.id}`.execute(db);
    return address;
  };

  const send = async (mail: PendingMail) => {
    const alert = JSON.parse(mail.payload) as AlertRaised;
    const message = alertMail(alert, options.dashboardUrl);
    const to = await recipient(mailRow(mail.email_id), mail.tenant_id, mail.user_id);
    if (to === undefined) return;
    try {
      await transport.sendMail({
        from: options.from,
        to,
        subject: message.subject,
        text: message.text,
        html: message.html,
        headers: { "X-Dmarc-Ledger-Alert-Id": alert.alertId },
      });
      await recordAttempt(mailRow(mail.email_id), mail.attempts + 1);
    } catch (error) {
      await recordAttempt(mailRow(mail.email_id), mail.attempts + 1, error);
    }
  };

  /**
   * An attempt's outcome on its row (alert_email or alert_digest, same columns): sent, or the
   * error and when to try again.
   */
  const recordAttempt = async (row: OutboxRow, attempts: number, error?: unknown) => {
    const outcome =
      error === undefined
        ? sql`status = 'sent', sent_at = ${new Date()}, last_error = null`
        : sql`last_error = ${(error instanceof Error ? error.message : String(error)).slice(0, 500)},
            next_attempt_at = ${new Date(Date.now() + retryDelay(attempts, options.retryBaseMs, options.retryMaxMs))}`;
    await sql`update ${sql.table(row.table)} set attempts = ${attempts}, lease_until = null, ${outcome}
      where ${sql.ref(row.idColumn)} = ${row.id}`.execute(db);
  };

  const claimDigest = async (): Promise<PendingDigest | undefined> => {
    const now = new Date();
    const result = await sql<PendingDigest>`
      update alert_digest set lease_until = ${new Date(now.getTime() + leaseMs)}
      where digest_id = (
        select digest_id from alert_digest
        where status = 'pending' and next_attempt_at <= ${now}
          and (lease_until is null or lease_until < ${now})
        order by next_attempt_at limit 1
        for update skip locked
      )
      returning digest_id, tenant_id, user_id, attempts, subject, text, html`.execute(db);
    return result.rows[0];
  };

  const sendDigest = async (digest: PendingDigest) => {
    const to = await recipient(digestRow(digest.digest_id), digest.tenant_id, digest.user_id);
    if (to === undefined) return;
    try {
      await transport.sendMail({
        from: options.from,
        to,
        subject: digest.subject,
        text: digest.text,
        html: digest.html,
        // The same on a resend after a crash between the relay's acceptance and our record of it.
        messageId: `<${createHash("sha256").update(digest.digest_id).digest("hex").slice(0, 32)}@dmarc-ledger.digest>`,
      });
      await recordAttempt(digestRow(digest.digest_id), digest.attempts + 1);
    } catch (error) {
      await recordAttempt(digestRow(digest.digest_id), digest.attempts + 1, error);
    }
  };

  const loop = (async () => {
    while (!stopping) {
      let mail: PendingMail | PendingDigest | undefined;
      try {
        mail = await claim();
        if (mail) await send(mail);
        else {
          mail = await claimDigest();
          if (mail) await sendDigest(mail);
        }
      } catch (error) {
        options.onError?.(error);
      }
      if (mail || stopping) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.pollMs ?? 250);
        wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wakeUp = null;
    }
  })();

  return {
    wake() {
      (wakeUp as (() => void) | null)?.();
    },
    async stop() {
      stopping = true;
      (wakeUp as (() => void) | null)?.();
      await loop;
      transport.close();
    },
  };
}
