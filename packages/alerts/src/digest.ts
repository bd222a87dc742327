import type { UsersSchema } from "@dmarc-ledger/users";
import { type Kysely, sql } from "kysely";
import type { AlertsSchema } from "./schema.js";

export type DigestKind = "daily" | "weekly";

const dayMs = 86_400_000;

/** The last whole period before `now`: the UTC day, or the ISO week (Monday to Monday, UTC). */
export function lastPeriod(kind: DigestKind, now: Date): { start: Date; end: Date } {
  const today = Math.floor(now.getTime() / dayMs) * dayMs;
  if (kind === "daily") return { start: new Date(today - dayMs), end: new Date(today) };
  const weekday = (new Date(today).getUTCDay() + 6) % 7; // Monday 0
  const monday = today - weekday * dayMs;
  return { start: new Date(monday - 7 * dayMs), end: new Date(monday) };
}

interface DomainFigures {
  domain: string;
  messages: number;
  failed: number;
  newSenders: string[];
}

export interface DigestContent {
  subject: string;
  text: string;
  html: string;
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!,
  );

/**
 * A tenant's digest of a period: per domain its volume, pass share and new senders (from the
 * evaluator's state: messages by the day of the reports' begin, senders by when first seen), the
 * failure reports received and the alerts raised (what changed).
 */
export async function buildDigest(
  db: Kysely<AlertsSchema>,
  tenantId: string,
  kind: DigestKind,
  period: { start: Date; end: Date },
): Promise<DigestContent> {
  const firstDay = period.start.toISOString().slice(0, 10);
  const lastDay = new Date(period.end.getTime() - 1).toISOString().slice(0, 10);
  const domains = await db
    .selectFrom("alert_domain_owner")
    .select("domain")
    .where("tenant_id", "=", tenantId)
    .orderBy("domain")
    .execute();
  const figures: DomainFigures[] = [];
  for (const { domain } of domains) {
    const days = await db
      .selectFrom("alert_domain_day")
      .select([
        sql<string>`coalesce(sum(messages), 0)::text`.as("messages"),
        sql<string>`coalesce(sum(failed), 0)::text`.as("failed"),
      ])
      .where("domain", "=", domain)
      .where("day", ">=", firstDay)
      .where("day", "<=", lastDay)
      .executeTakeFirstOrThrow();
    const senders = await db
      .selectFrom("alert_known_sender")
      .select("source_ip")
      .where("domain", "=", domain)
      .where("first_seen", ">=", period.start)
      .where("first_seen", "<", period.end)
      .orderBy("source_ip")
      .execute();
    figures.push({
      domain,
      messages: Number(days.messages),
      failed: Number(days.failed),
      newSenders: senders.map((row) => row.source_ip),
    });
  }
  const alerts = await db
    .selectFrom("alert")
    .select(["rule", "summary"])
    .where("tenant_id", "=", tenantId)
    .where("raised_at", ">=", period.start)
    .where("raised_at", "<", period.end)
    .orderBy("raised_at")
    .execute();
  const failureReports = alerts.filter((alert) => alert.rule === "failure_report").length;
  const changes = alerts.filter((alert) => alert.rule !== "new_sender" && alert.rule !== "failure_report");
  const share = (row: DomainFigures) =>
    row.messages === 0
      ? "no messages"
      : `${(((row.messages - row.failed) * 100) / row.messages).toFixed(1)}% passing DMARC`;
  const span = kind === "daily" ? firstDay : `${firstDay} to ${lastDay}`;
  const subject = `[dmarc-ledger] ${kind} digest, ${span}`;
  const lines = [
    `Your ${kind} DMARC digest, ${span} (UTC).`,
    "",
    ...figures.flatMap((row) => [
      `${row.domain}: ${row.messages} messages, ${share(row)}, ${row.newSenders.length} new sender(s)${row.newSenders.length ? `: ${row.newSenders.slice(0, 10).join(", ")}${row.newSenders.length > 10 ? ", …" : ""}` : ""}`,
    ]),
    "",
    `Failure reports received: ${failureReports}`,
    `What changed (${changes.length}):`,
    ...changes.slice(0, 50).map((alert) => `- ${alert.summary}`),
  ];
  const html = `<!doctype html><html><body><p>Your ${kind} DMARC digest, ${escapeHtml(span)} (UTC).</p><table><tr><th align="left">Domain</th><th>Messages</th><th>Pass share</th><th>New senders</th></tr>${figures
    .map(
      (row) =>
        `<tr><td>${escapeHtml(row.domain)}</td><td>${row.messages}</td><td>${escapeHtml(share(row))}</td><td>${escapeHtml(row.newSenders.slice(0, 10).join(", ") || "none")}</td></tr>`,
    )
    .join(
      "",
    )}</table><p>Failure reports received: ${failureReports}</p><p>What changed (${changes.length}):</p><ul>${changes
    .slice(0, 50)
    .map((alert) => `<li>${escapeHtml(alert.summary)}</li>`)
    .join("")}</ul></body></html>`;
  return { subject, text: lines.join("\n"), html };
}

/**
 * Makes the digest of the last whole period for every person of every tenant with a domain,
 * once: a row keyed by tenant, person, kind and period start is inserted before anything is sent
 * (the mail worker sends it, retries it while the relay is down, and marks it sent), so running
 * this again, or in two processes, makes no second one. Returns how many it made.
 */
export async function scheduleDigests(
  db: Kysely<AlertsSchema>,
  kind: DigestKind,
  now: Date = new Date(),
): Promise<number> {
  const period = lastPeriod(kind, now);
  const tenants = await db.selectFrom("alert_domain_owner").select("tenant_id").distinct().execute();
  let made = 0;
  for (const { tenant_id: tenantId } of tenants) {
    // By id: the mail worker opens each address when it sends (docs/privacy.md, "People").
    const people = await (db as unknown as Kysely<UsersSchema>)
      .selectFrom("user_role")
      .select("user_id as userId")
      .where("tenant_id", "=", tenantId)
      .execute();
    if (people.length === 0) continue;
    const keyOf = (userId: string) => `${kind}:${tenantId}:${userId}:${period.start.toISOString()}`;
    const existing = await db
      .selectFrom("alert_digest")
      .select("digest_id")
      .where(
        "digest_id",
        "in",
        people.map((person) => keyOf(person.userId)),
      )
      .execute();
    const done = new Set(existing.map((row) => row.digest_id));
    const due = people.filter((person) => !done.has(keyOf(person.userId)));
    if (due.length === 0) continue;
    const content = await buildDigest(db, tenantId, kind, period);
    const inserted = await db
      .insertInto("alert_digest")
      .values(
        due.map((person) => ({
          digest_id: keyOf(person.userId),
          tenant_id: tenantId,
          user_id: person.userId,
          period_start: period.start,
          period_end: period.end,
          ...content,
          status: "pending",
          attempts: 0,
          // Due at once: `now` says which period, not when to send.
          next_attempt_at: new Date(),
        })),
      )
      .onConflict((oc) => oc.column("digest_id").doNothing())
      .executeTakeFirst();
    made += Number(inserted.numInsertedOrUpdatedRows ?? 0n);
  }
  return made;
}
