import { type Kysely, sql } from "kysely";
import type { SourceIpNameSchema } from "./schema.js";

/** How long an answer holds: a definitive one for the refresh age, a failed attempt for the retry age. */
export interface AnswerAges {
  refreshAgeSeconds: number;
  retryAgeSeconds: number;
}

const failedOutcomes = ["timeout", "error"];

/** Whether an answer of `outcome` made at `resolvedAt` must be asked for again at `now`. */
export function isDue(outcome: string, resolvedAt: Date, now: Date, ages: AnswerAges): boolean {
  // A naming made before DNS was asked is due at once: DNS has yet to answer at all.
  if (outcome === "not_asked") return true;
  const age = failedOutcomes.includes(outcome) ? ages.retryAgeSeconds : ages.refreshAgeSeconds;
  return now.getTime() - resolvedAt.getTime() >= age * 1000;
}

/** An IP to resolve; `seenBefore` when the read model holds an earlier answer for it. */
export interface DueIp {
  ip: string;
  seenBefore: boolean;
}

/** Of `ips`, those without a projected answer or whose answer is due again, in one query per 5,000. */
export async function dueAmong(
  db: Kysely<SourceIpNameSchema>,
  ips: readonly string[],
  now: Date,
  ages: AnswerAges,
): Promise<DueIp[]> {
  const due: DueIp[] = [];
  for (let offset = 0; offset < ips.length; offset += 5_000) {
    const chunk = ips.slice(offset, offset + 5_000);
    const known = await db
      .selectFrom("source_ip_name")
      .select(["source_ip", "outcome", "resolved_at"])
      .where("source_ip", "=", sql<string>`any(${chunk}::text[])`)
      .execute();
    const seen = new Map(known.map((row) => [row.source_ip, row]));
    for (const ip of chunk) {
      const row = seen.get(ip);
      if (!row) due.push({ ip, seenBefore: false });
      else if (isDue(row.outcome, new Date(row.resolved_at), now, ages)) due.push({ ip, seenBefore: true });
    }
  }
  return due;
}

/** The IPs whose answers are due again, oldest first: what the periodic sweep re-resolves. */
export async function staleSourceIps(
  db: Kysely<SourceIpNameSchema>,
  now: Date,
  ages: AnswerAges,
  limit: number,
): Promise<string[]> {
  const refreshBefore = new Date(now.getTime() - ages.refreshAgeSeconds * 1000);
  const retryBefore = new Date(now.getTime() - ages.retryAgeSeconds * 1000);
  const rows = await db
    .selectFrom("source_ip_name")
    .select("source_ip")
    .where((eb) =>
      eb.or([
        eb("resolved_at", "<=", refreshBefore),
        eb.and([eb("outcome", "in", failedOutcomes), eb("resolved_at", "<=", retryBefore)]),
        eb("outcome", "=", "not_asked"),
      ]),
    )
    .orderBy("resolved_at")
    .limit(limit)
    .execute();
  return rows.map((row) => row.source_ip);
}

/**
 * The IPs whose naming was made by another version of the shipped map or databases than
 * `sources` (an upgrade shipped new ones): named again from the evidence their stream holds.
 * A naming by maps this build does not ship (another origin) is left as it is; an answer with
 * no naming (v1) is named when it is next asked.
 */
export async function outdatedNamings(
  db: Kysely<SourceIpNameSchema>,
  sources: string,
  limit: number,
): Promise<string[]> {
  const rows = await db
    .selectFrom("source_ip_name")
    .select("source_ip")
    .where(sql<boolean>`naming_sources <> ${sources}
      and (naming_sources like '{"serviceMap":"parsedmarc-%'
        or naming_sources like '%"asnDatabase":"@ip-location-db/asn@%')`)
    .orderBy("source_ip")
    .limit(limit)
    .execute();
  return rows.map((row) => row.source_ip);
}
