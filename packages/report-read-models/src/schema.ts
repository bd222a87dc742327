import type { ColumnType, Generated } from "kysely";

/**
 * The read-model tables, typed for kysely so that a query naming a wrong column fails to compile.
 * Counters are bigint columns: pg hands them back as strings, PGlite as numbers; queries cast them
 * to text in SQL, which is what the API returns anyway.
 */
type Int8 = ColumnType<string | number, number | bigint | string, number | bigint | string>;

export interface ProjectionCheckpointTable {
  projection: string;
  /** The global position of the last event applied, as a decimal string (positions exceed int8). */
  position: string;
  updated_at: ColumnType<Date, Date | string, Date | string>;
}

export interface TenantTable {
  tenant_id: string;
  name: string;
  region: string;
  created_at: ColumnType<Date, Date | string, Date | string>;
}

export interface ApiKeyTable {
  key_id: string;
  tenant_id: string;
  key_hash: string;
  key_prefix: string;
  /** Comma-separated scope names: read,write,ingest. */
  scopes: string;
  region: string;
  revoked: boolean;
}

export interface DomainTable {
  domain: string;
  tenant_id: string;
  group_name: string | null;
  added_at: ColumnType<Date, Date | string, Date | string>;
}

/**
 * The claims in force in the domain trees (DomainReserved not yet DomainReleased): which tenant
 * holds each claimed domain. A tenant's domain without its claim was added before the tree rule.
 */
export interface DomainClaimTable {
  domain: string;
  tenant_id: string;
}

/** The summed counters of the rollups; the others (DMARCUnaligned, …Failed) are derived from them. */
interface SummedCounters {
  volume: Int8;
  dmarc_pass: Int8;
  unaligned_arc_pass: Int8;
  dkim_aligned: Int8;
  spf_aligned: Int8;
  dkim_pass: Int8;
  spf_pass: Int8;
}

/**
 * Messages per (policy domain, day-normalised begin). The begin is kept to the second, so a
 * period filter on it is exact; reports mostly start at midnight, so the table stays small.
 */
export interface AggDomainTable extends SummedCounters {
  domain: string;
  t: Int8;
}

/** Messages per reporting organisation; the by-organization grouping reads it. */
export interface AggOrganizationTable extends SummedCounters {
  domain: string;
  organization: string;
  t: Int8;
}

/**
 * The by-source facts: messages per (policy domain, source IP, organisation, begin) and per the
 * values the by-source records pick "the one with the most messages" of (disposition, ARC, SPF
 * and DKIM domain), with whether they passed DMARC (the unaligned-source grouping keeps only the
 * rows that did not).
 */
export interface AggSourceTable {
  domain: string;
  source_ip: string;
  organization: string;
  t: Int8;
  disposition: string;
  /** "" when the row carried no ARC result. */
  arc: string;
  spf_domain: string;
  dkim_domain: string;
  dmarc_pass: boolean;
  volume: Int8;
  unaligned_arc_pass: Int8;
  dkim_aligned: Int8;
  spf_aligned: Int8;
  dkim_pass: Int8;
  spf_pass: Int8;
  /** The number of the projection batch that last changed the row (see agg_source_change). */
  changed_seq: Int8;
}

/** One row: the number of the latest batch that wrote agg_source (source-change-counter.ts). */
export interface AggSourceChangeTable {
  /** Always true: the primary key that keeps the table at one row. */
  single: boolean;
  last_seq: Int8;
}

/**
 * One ranking of a tenant's source groups over a calendar month or year, as of `built_seq`: the
 * by-source endpoints walk it in volume order instead of grouping millions of facts per request.
 * `scope` is "all" or "unaligned" (the facts that did not pass DMARC only).
 */
export interface SourceRankingBuildTable {
  ranking_id: Int8;
  tenant_id: string;
  scope: string;
  bucket_start: Int8;
  bucket_end: Int8;
  /** Facts with a higher changed_seq were changed after the build. */
  built_seq: Int8;
  /** The tenant's number of domains at the build: another number means the ranking is void. */
  domain_count: number;
  group_count: Int8;
  built_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

/** A group's sums over its ranking's bucket (`dmarc_pass` summed, unlike in agg_source). */
export interface SourceRankingTable extends SummedCounters {
  ranking_id: Int8;
  domain: string;
  source_ip: string;
  organization: string;
  /** How many agg_source rows the sums are of: a group is in a period while it has one there. */
  facts: Int8;
  /** Seconds from the bucket's start to the first `t` of those rows. */
  start_offset: Int8;
  /** Seconds from the last `t` of those rows to the bucket's end. */
  end_offset: Int8;
}

/** Reverse DNS of source IPs, from the latest SourceIpResolved of each (`source-ip-<ip>`). */
export interface SourceIpNameTable {
  source_ip: string;
  /** The registrable domain of the forward-confirmed PTR name; "" when there is none. */
  source_domain: string;
  /** The PTR name of the latest definitive answer (confirmed or not); null without one. */
  ptr_name: string | null;
  confirmed: boolean;
  /** The latest attempt's outcome: found, no_name, nxdomain, timeout or error. */
  outcome: string;
  /** When the latest attempt was made (the resolver asks again after an age from here). */
  resolved_at: ColumnType<Date, Date | string, Date | string>;
  /** When the latest definitive answer (not a timeout or error) was had; null before one. */
  answered_at: ColumnType<Date | null, Date | string | null, Date | string | null>;
}

export interface ForensicReportTable {
  /** Increasing with arrival at the service; assigned in event order, so replays repeat it. */
  forensic_id: Int8;
  identity: string;
  domain: string;
  /** Arrival of the reported message, Unix seconds (the event's time when the report lacks it). */
  received: Int8;
  subject: string;
  amount: Int8;
  headers: string;
}

/** Every event of every domain stream: the audit trail behind GET history. */
export interface AuditEventTable {
  domain: string;
  revision: Int8;
  event_type: string;
  recorded_at: ColumnType<Date, Date | string, Date | string>;
  caused_by: string;
  correlation_id: string | null;
  /** The event's payload as JSON text. */
  data: string;
}

/** The Safe SPF state of a domain: its original record and the outcome of the last computation. */
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
  last_computed: ColumnType<Date | null, Date | string | null, Date | string | null>;
  last_error: string | null;
  retrying: boolean;
  updated_at: ColumnType<Date, Date | string, Date | string>;
  /** Seconds: the shortest TTL among the answers the current record was built from. */
  min_ttl: ColumnType<number | null, number | null | undefined, number | null>;
}

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null, Date | string | null>;

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

/**
 * Every policy domain a report has named: small (one row per domain, not per row), so that the
 * tenant filter resolves "the tenant's domains and their subdomains" here and filters the big
 * tables with a plain hashed IN.
 */
export interface ReportDomainTable {
  domain: string;
}

export interface ReadModelSchema {
  projection_checkpoint: ProjectionCheckpointTable;
  tenant: TenantTable;
  api_key: ApiKeyTable;
  domain: DomainTable;
  domain_claim: DomainClaimTable;
  agg_domain: AggDomainTable;
  agg_organization: AggOrganizationTable;
  agg_source: AggSourceTable;
  agg_source_change: AggSourceChangeTable;
  source_ranking_build: SourceRankingBuildTable;
  source_ranking: SourceRankingTable;
  source_ip_name: SourceIpNameTable;
  forensic_report: ForensicReportTable;
  audit_event: AuditEventTable;
  safe_spf: SafeSpfTable;
  safe_spf_refresh: SafeSpfRefreshTable;
  report_domain: ReportDomainTable;
}

export type GeneratedId = Generated<number>;
