import type { TenancySchema } from "@dmarc-ledger/tenancy";
import type { ColumnType } from "kysely";

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null, Date | string | null>;

/**
 * The Safe SPF state of a domain: its original record and the outcome of the last computation.
 * Projected from the domain's events (safe-spf-state-projection.ts).
 */
export interface SafeSpfTable {
  domain: string;
  tenant_id: string;
  original: string;
  /** pending, computed or failed */
  status: string;
  /** The published records as JSON text, [] until computed. */
  records: string;
  lookups_before: number | null;
  lookups_after: number | null;
  warnings: string;
  last_computed: NullableTimestamp;
  last_error: string | null;
  retrying: boolean;
  updated_at: Timestamp;
  /** Seconds: the shortest TTL among the answers the current record was built from. */
  min_ttl: ColumnType<number | null, number | null | undefined, number | null>;
}

/**
 * The Safe SPF refresher's schedule, one row per domain with a record: not a projection (an
 * unchanged result appends no event), see docs/architecture.md "Safe SPF kept current".
 */
export interface SafeSpfRefreshTable {
  domain: string;
  /** When the record is to be computed again: its TTL ran out, or the next retry after failures. */
  next_due: Timestamp;
  /** The last computation that succeeded, whether or not it changed the record. */
  last_checked: NullableTimestamp;
  /** Until when the answers of that computation hold: after it, and no success since, it is stale. */
  valid_until: NullableTimestamp;
  /** Failed computations in a row since the last success (the backoff's exponent). */
  failures: ColumnType<number, number | undefined, number>;
  /** "code: message" of the latest failure in that row; null after a success. */
  failure: string | null;
  failing_since: NullableTimestamp;
  /** Which refresher holds the domain, and until when (a crashed one's lease runs out). */
  lease_owner: string | null;
  lease_until: NullableTimestamp;
}

/** The tables Safe SPF owns: the projected state and the refresher's schedule. */
export interface SafeSpfSchema {
  safe_spf: SafeSpfTable;
  safe_spf_refresh: SafeSpfRefreshTable;
}

/** What the refresher reads besides its own: whether a domain still has a tenant. */
export type SafeSpfAndDomainSchema = SafeSpfSchema & Pick<TenancySchema, "domain">;
