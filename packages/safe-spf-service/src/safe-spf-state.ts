import { type Kysely, sql } from "kysely";
import type { SafeSpfSchema } from "./schema.js";

/**
 * Whether the served record still rests on answers that hold: `current`; `stale` when their TTL
 * ran out (plus a grace for the refresher to get to it) without a successful check since;
 * `failing` when the latest computations failed (the last good record is still served).
 */
export type SafeSpfFreshness =
  | { state: "current" }
  | { state: "stale"; since: string }
  | { state: "failing"; reason: string; since: string; staleSince: string | null };

export interface SafeSpfState {
  domain: string;
  original: string;
  status: string;
  records: { name: string; value: string }[];
  lookupsBefore: number | null;
  lookupsAfter: number | null;
  warnings: string[];
  lastComputed: string | null;
  lastError: string | null;
  retrying: boolean;
  /** The last successful computation, changed or not (no event records the unchanged ones). */
  lastChecked: string | null;
  nextCheck: string | null;
  /** Null until the domain has a record. */
  freshness: SafeSpfFreshness | null;
}

/** How late a due refresh may run before the record counts as stale (a busy refresher's queue). */
export const staleGraceMs = 60_000;

const timeText = (column: string) =>
  sql<string | null>`to_char(${sql.ref(column)} at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS')`;

/** GET safe_spf: the Safe SPF state of one of the tenant's domains; null when there is none. */
export async function safeSpfState(
  db: Kysely<SafeSpfSchema>,
  tenantId: string,
  domain: string,
): Promise<SafeSpfState | null> {
  const row = await db
    .selectFrom("safe_spf")
    .leftJoin("safe_spf_refresh", "safe_spf_refresh.domain", "safe_spf.domain")
    .select([
      "safe_spf.domain",
      "original",
      "status",
      "records",
      "lookups_before",
      "lookups_after",
      "warnings",
      timeText("last_computed").as("last_computed"),
      "last_error",
      "retrying",
      timeText("last_checked").as("last_checked"),
      timeText("next_due").as("next_due"),
      timeText("valid_until").as("valid_until"),
      timeText("failing_since").as("failing_since"),
      "failures",
      "failure",
      sql<boolean>`coalesce(valid_until < now() - ${`${staleGraceMs} milliseconds`}::interval, false)`.as(
        "stale",
      ),
    ])
    .where("safe_spf.domain", "=", domain)
    .where("tenant_id", "=", tenantId)
    .executeTakeFirst();
  if (!row) return null;
  const records = JSON.parse(row.records) as { name: string; value: string }[];
  let freshness: SafeSpfFreshness | null = null;
  if (records.length > 0) {
    if (row.failures && row.failures > 0) {
      freshness = {
        state: "failing",
        reason: row.failure ?? "unknown",
        since: row.failing_since ?? "",
        staleSince: row.stale ? row.valid_until : null,
      };
    } else if (row.stale && row.valid_until) freshness = { state: "stale", since: row.valid_until };
    else freshness = { state: "current" };
  }
  return {
    domain: row.domain,
    original: row.original,
    status: row.status,
    records,
    lookupsBefore: row.lookups_before,
    lookupsAfter: row.lookups_after,
    warnings: JSON.parse(row.warnings),
    lastComputed: row.last_computed,
    lastError: row.last_error,
    retrying: row.retrying,
    lastChecked: row.last_checked ?? row.last_computed,
    nextCheck: row.next_due,
    freshness,
  };
}
