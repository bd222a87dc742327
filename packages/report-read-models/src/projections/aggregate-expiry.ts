import type { AggregateFactsExpired, DomainEvent } from "@dmarc-ledger/events";
import type { Projection } from "@dmarc-ledger/projection-engine";
import { type Kysely, sql, type Transaction } from "kysely";
import type { ReportSchema } from "../schema.js";
import { recordSenderFactChanges } from "../sender-rankings/change-numbers.js";
import { appendExpiredSenderFacts } from "../sender-rankings/fact-deltas.js";
import { subtractExpiredFromRankings } from "../source-rankings/expire-ranked-facts.js";

const DAY = 86_400;

/** Unix seconds of the event's `before` day at midnight UTC: facts with a `t` below it go. */
export function expiryCutoff(event: Pick<AggregateFactsExpired, "before">): number {
  const ms = Date.parse(`${event.before}T00:00:00Z`);
  if (Number.isNaN(ms)) throw new Error(`AggregateFactsExpired: "${event.before}" is not a YYYY-MM-DD day`);
  return ms / 1000;
}

/** What one aggregate projection drops of its tables for one AggregateFactsExpired. */
export type DropExpired = (trx: Transaction<ReportSchema>, expired: AggregateFactsExpired) => Promise<void>;

/**
 * The projection, also handling AggregateFactsExpired by `drop`. The batch is cut at each expiry:
 * the events before it are applied first (their facts may be among those that go), those after
 * it then (theirs stay, whatever their day: the next run's event takes them). A replay meets the
 * expiry at the same point of the history, so it drops the same facts.
 */
export function withAggregateExpiry(
  projection: Projection<ReportSchema>,
  drop: DropExpired,
): Projection<ReportSchema> {
  return {
    name: projection.name,
    tables: projection.tables,
    handles: new Set([...projection.handles, "AggregateFactsExpired"]),
    async apply(trx, events) {
      let run: DomainEvent[] = [];
      for (const event of events) {
        if (event.type !== "AggregateFactsExpired") {
          run.push(event);
          continue;
        }
        if (run.length > 0) await projection.apply(trx, run);
        run = [];
        if (event.data.domains.length > 0) await drop(trx, event.data);
      }
      if (run.length > 0) await projection.apply(trx, run);
    },
  };
}

/** The facts of a table keyed by (domain, t) that an expiry removes. */
const dropByT =
  (table: "agg_domain" | "agg_organization" | "agg_sender_fact"): DropExpired =>
  async (trx, expired) => {
    await sql`delete from ${sql.table(table)}
      where domain = any(${expired.domains}::text[]) and t < ${expiryCutoff(expired)}`.execute(trx);
  };

export const dropExpiredDomainFacts = dropByT("agg_domain");

/** SMTP TLS facts (tls_facts) expire with the aggregate facts of their policy domains. */
export const dropExpiredTlsFacts: DropExpired = async (trx, expired) => {
  for (const table of ["tls_policy_fact", "tls_failure_fact"] as const)
    await sql`delete from ${sql.table(table)}
      where domain = any(${expired.domains}::text[]) and t < ${expiryCutoff(expired)}`.execute(trx);
};
export const dropExpiredOrganizationFacts = dropByT("agg_organization");

/**
 * agg_sender_fact, the change marks of the days it loses, and the facts it loses negated in
 * agg_sender_delta, all numbered as one batch: a sender ranking built before counts them no more
 * at query time (as it counts a later batch's facts), and the upkeep builds it again.
 */
export const dropExpiredSenderFacts: DropExpired = async (trx, expired) => {
  const cutoff = expiryCutoff(expired);
  const { rows } = await sql<{ domain: string; day: number }>`select domain, day from agg_sender_change
    where domain = any(${expired.domains}::text[]) and day < ${Math.ceil(cutoff / DAY)}`.execute(trx);
  const seq = await recordSenderFactChanges(
    trx,
    rows.map((row) => ({ domain: row.domain, t: Number(row.day) * DAY })),
  );
  if (seq === null) await dropByT("agg_sender_fact")(trx, expired);
  else await appendExpiredSenderFacts(trx, seq, expired.domains, cutoff);
};

/**
 * agg_domain_day, and the day totals of every tenant that counted one of the domains: their
 * build is dropped, so the series is summed from agg_domain_day until the upkeep builds it again
 * (a deleted row leaves no change number to find it by).
 */
export const dropExpiredDays: DropExpired = async (trx, expired) => {
  await sql`delete from agg_domain_day
    where domain = any(${expired.domains}::text[]) and day < ${expiryCutoff(expired) / DAY}`.execute(trx);
  await sql`delete from tenant_day_total_build where report_domains && ${expired.domains}::text[]`.execute(
    trx,
  );
};

/**
 * agg_source, its counts per domain and day, and the rankings built on it: each ranking loses
 * the sums it had counted of the facts that go (source-rankings/expire-ranked-facts.ts), in the
 * same transaction as the facts, so that no answer sees one without the other.
 */
export const dropExpiredSourceFacts: DropExpired = async (trx, expired) => {
  const cutoff = expiryCutoff(expired);
  await subtractExpiredFromRankings(trx, expired.domains, cutoff, async () => {
    await sql`delete from agg_source where domain = any(${expired.domains}::text[]) and t < ${cutoff}`.execute(
      trx,
    );
    await sql`delete from agg_source_count
      where domain = any(${expired.domains}::text[]) and t < ${cutoff}`.execute(trx);
  });
};

/**
 * What an expiry of `domains` before the day `before` (YYYY-MM-DD) would remove now: the rows of
 * each aggregate table (by the same rule as the drops above) and the messages they count (from
 * the daily series). What the retention job writes into AggregateFactsExpired.
 */
export async function countExpiringFacts(
  // biome-ignore lint/suspicious/noExplicitAny: callers hold handles typed for their own tables
  db: Kysely<any>,
  domains: readonly string[],
  before: string,
): Promise<AggregateFactsExpired["removed"]> {
  const cutoff = expiryCutoff({ before });
  const rows: Record<string, number> = {};
  if (domains.length === 0) return { messages: 0, rows };
  const inDomains = sql`domain = any(${domains}::text[])`;
  for (const table of ["agg_domain", "agg_organization", "agg_source", "agg_sender_fact"] as const) {
    const { rows: counted } = await sql<{ n: string }>`select count(*)::text as n from ${sql.table(table)}
      where ${inDomains} and t < ${cutoff}`.execute(db);
    rows[table] = Number(counted[0]!.n);
  }
  const { rows: days } = await sql<{ n: string; messages: string }>`
    select count(*)::text as n, coalesce(sum(volume), 0)::text as messages from agg_domain_day
    where ${inDomains} and day < ${cutoff / DAY}`.execute(db);
  rows.agg_domain_day = Number(days[0]!.n);
  return { messages: Number(days[0]!.messages), rows };
}
