import type { UsersSchema } from "@dmarc-ledger/users";
import { type Kysely, sql } from "kysely";
import { escapeHtml } from "./mail-words.js";
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

/** A domain's messages and those failing DMARC in a period (by the reports' own days). */
interface Volume {
  messages: number;
  failed: number;
}

interface DomainChange {
  domain: string;
  now: Volume;
  before: Volume;
  newSenders: string[];
}

export interface DigestContent {
  subject: string;
  text: string;
  html: string;
}

/** The most new senders a digest names per domain, and alerts it lists; the rest are counted. */
const listLimit = 20;

/** A failure share moving by less than this (percentage points) is not a change worth a mail. */
const shareChangePoints = 1;

const share = (volume: Volume) => (volume.messages === 0 ? null : (volume.failed * 100) / volume.messages);

const shareText = (volume: Volume) => {
  const percent = share(volume);
  return percent === null
    ? "no reports"
    : `${percent.toFixed(1)}% of ${volume.messages.toLocaleString("en-US")} messages failed DMARC`;
};

function shareChanged(row: DomainChange): boolean {
  const [now, before] = [share(row.now), share(row.before)];
  if (now === null || before === null) return now !== before;
  return Math.abs(now - before) >= shareChangePoints;
}

async function volumeOf(db: Kysely<AlertsSchema>, domain: string, period: { start: Date; end: Date }) {
  const row = await db
    .selectFrom("alert_domain_day")
    .select([
      sql<string>`coalesce(sum(messages), 0)::text`.as("messages"),
      sql<string>`coalesce(sum(failed), 0)::text`.as("failed"),
    ])
    .where("domain", "=", domain)
    .where("day", ">=", period.start.toISOString().slice(0, 10))
    .where("day", "<=", new Date(period.end.getTime() - 1).toISOString().slice(0, 10))
    .executeTakeFirstOrThrow();
  return { messages: Number(row.messages), failed: Number(row.failed) };
}

/**
 * A tenant's digest of a period: what changed against the period before (the day before, the week
 * before): per domain its new senders (by when first seen) and its DMARC failure share then and
 * now (from the evaluator's state, by the reports' own days), and the alerts raised. Null when
 * nothing changed: no new sender, no alert, no failure share that moved by a point or more.
 */
export async function buildDigest(
  db: Kysely<AlertsSchema>,
  tenantId: string,
  kind: DigestKind,
  period: { start: Date; end: Date },
  dashboardUrl = "http://localhost:8080/",
): Promise<DigestContent | null> {
  const length = period.end.getTime() - period.start.getTime();
  const previous = { start: new Date(period.start.getTime() - length), end: period.start };
  const firstDay = period.start.toISOString().slice(0, 10);
  const lastDay = new Date(period.end.getTime() - 1).toISOString().slice(0, 10);
  const domains = await db
    .selectFrom("alert_domain_owner")
    .select("domain")
    .where("tenant_id", "=", tenantId)
    .orderBy("domain")
    .execute();
  const rows: DomainChange[] = [];
  for (const { domain } of domains) {
    const senders = await db
      .selectFrom("alert_known_sender")
      .select("source_ip")
      .where("domain", "=", domain)
      .where("first_seen", ">=", period.start)
      .where("first_seen", "<", period.end)
      .orderBy("source_ip")
      .execute();
    rows.push({
      domain,
      now: await volumeOf(db, domain, period),
      before: await volumeOf(db, domain, previous),
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
  const withSenders = rows.filter((row) => row.newSenders.length > 0);
  const reported = rows.filter((row) => row.now.messages > 0 || row.before.messages > 0);
  if (withSenders.length === 0 && alerts.length === 0 && !reported.some(shareChanged)) return null;

  const span = kind === "daily" ? firstDay : `${firstDay} to ${lastDay}`;
  const before = kind === "daily" ? "the day before" : "the week before";
  const subject = `[dmarc-ledger] ${kind} digest, ${span}`;
  const link = new URL(dashboardUrl);
  link.search = new URLSearchParams({ period: "custom", from: firstDay, to: lastDay }).toString();
  const sendersLine = (row: DomainChange) =>
    `${row.domain}: ${row.newSenders.slice(0, listLimit).join(", ")}${row.newSenders.length > listLimit ? ` and ${row.newSenders.length - listLimit} more` : ""}`;
  const shareLine = (row: DomainChange) =>
    `${row.domain}: ${shareText(row.now)} (${before}: ${shareText(row.before)})`;
  const alertLines = alerts.slice(0, listLimit).map((alert) => alert.summary);
  const moreAlerts = alerts.length > listLimit ? [`and ${alerts.length - listLimit} more`] : [];
  const sections: { title: string; lines: string[] }[] = [
    {
      title: `New senders (${withSenders.reduce((sum, row) => sum + row.newSenders.length, 0)})`,
      lines: withSenders.length ? withSenders.map(sendersLine) : ["none"],
    },
    { title: "DMARC failures by domain", lines: reported.length ? reported.map(shareLine) : ["no reports"] },
    { title: `Alerts raised (${alerts.length})`, lines: [...alertLines, ...moreAlerts] },
  ];
  const intro = `What changed for your domains ${kind === "daily" ? "on" : "in"} ${span} (UTC), against ${before}.`;
  const text = [
    intro,
    ...sections.flatMap((section) => ["", `${section.title}:`, ...section.lines.map((line) => `- ${line}`)]),
    "",
    `See it in the dashboard: ${link}`,
  ].join("\n");
  const html = `<!doctype html><html><body><p>${escapeHtml(intro)}</p>${sections
    .map(
      (section) =>
        `<h3>${escapeHtml(section.title)}</h3>${section.lines.length ? `<ul>${section.lines.map((line) => `<li>${escapeHtml(line)}</li>`).join("")}</ul>` : ""}`,
    )
    .join("")}<p><a href="${escapeHtml(link.toString())}">See it in the dashboard</a></p></body></html>`;
  return { subject, text, html };
}

/**
 * Makes the digest of the last whole period for every person of every tenant with a domain,
 * once: a row keyed by tenant, person, kind and period start is inserted before anything is sent
 * (the mail worker sends it, retries it while the relay is down, and marks it sent), so running
 * this again, or in two processes, makes no second one. A period in which nothing changed gets
 * rows marked `unchanged`, never sent, so that it is not looked at again. Returns how many it made
 * to send.
 */
export async function scheduleDigests(
  db: Kysely<AlertsSchema>,
  kind: DigestKind,
  now: Date = new Date(),
  dashboardUrl?: string,
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
    const content = await buildDigest(db, tenantId, kind, period, dashboardUrl);
    const inserted = await db
      .insertInto("alert_digest")
      .values(
        due.map((person) => ({
          digest_id: keyOf(person.userId),
          tenant_id: tenantId,
          user_id: person.userId,
          period_start: period.start,
          period_end: period.end,
          ...(content ?? { subject: "", text: "", html: "" }),
          status: content ? "pending" : "unchanged",
          attempts: 0,
          // Due at once: `now` says which period, not when to send.
          next_attempt_at: new Date(),
        })),
      )
      .onConflict((oc) => oc.column("digest_id").doNothing())
      .executeTakeFirst();
    if (content) made += Number(inserted.numInsertedOrUpdatedRows ?? 0n);
  }
  return made;
}
