import type { TenancySchema } from "@dmarc-ledger/tenancy";
import type { ColumnType } from "kysely";

/**
 * The report read models' tables, typed for kysely so that a query naming a wrong column fails to compile.
 * Counters are bigint columns: pg hands them back as strings, PGlite as numbers; queries cast them
 * to text in SQL, which is what the API returns anyway.
 */
type Int8 = ColumnType<string | number, number | bigint | string, number | bigint | string>;

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

/**
 * Messages per (policy domain, UTC day), the day a report's part is attributed to by the same
 * split as agg_domain's `t` (spreadOverDays), with the receivers' dispositions: the daily series.
 */
export interface AggDomainDayTable extends SummedCounters {
  domain: string;
  /** Days since 1970-01-01 (UTC). */
  day: number;
  /** Messages whose disposition was none, quarantine, reject (any case); other words are in none of them. */
  disposition_none: Int8;
  disposition_quarantine: Int8;
  disposition_reject: Int8;
  /** The aggregate_by_date batch that last wrote the row (agg_domain_day_change numbers them). */
  changed_seq: ColumnType<string | number, number | string | undefined, number | string>;
}

/** One row: the number of the latest batch of aggregate_by_date. */
export interface AggDomainDayChangeTable {
  single: boolean;
  last_seq: Int8;
}

/** A tenant's sums per day over its report domains, as of its tenant_day_total_build. */
export interface TenantDayTotalTable extends SummedCounters {
  tenant_id: string;
  day: number;
  disposition_none: Int8;
  disposition_quarantine: Int8;
  disposition_reject: Int8;
}

/** What a tenant's day totals counted: its report domains (sorted) and the batch number. */
export interface TenantDayTotalBuildTable {
  tenant_id: string;
  report_domains: string[];
  built_seq: Int8;
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
  /**
   * The number of the projection batch that wrote the row (see agg_source_change). Rows are
   * written once: a batch adds its own row beside an earlier batch's of the same key.
   */
  changed_seq: Int8;
}

/**
 * The facts of aggregate_by_sender and policy_impact: messages per (policy domain, day-normalised
 * begin, source IP, disposition, DMARC pass, forwarded), forwarded meaning ARC pass or a
 * forwarding override reason (projections/aggregate-by-sender.ts). Rows are written once: a batch
 * adds its own row beside an earlier batch's of the same key, so readers sum them.
 */
export interface AggSenderFactTable {
  domain: string;
  t: Int8;
  source_ip: string;
  disposition: string;
  dmarc_pass: boolean;
  forwarded: boolean;
  volume: Int8;
  unaligned_arc_pass: Int8;
  dkim_aligned: Int8;
  spf_aligned: Int8;
  dkim_pass: Int8;
  spf_pass: Int8;
}

/** One row: the number of the latest batch that wrote agg_source (source-change-counter.ts). */
export interface AggSourceChangeTable {
  /** Always true: the primary key that keeps the table at one row. */
  single: boolean;
  last_seq: Int8;
}

/** How many agg_source rows a report domain has on a day (all, and those that did not pass DMARC). */
export interface AggSourceCountTable {
  domain: string;
  t: Int8;
  facts: Int8;
  unaligned_facts: Int8;
}

/** One row: the batch number up to which the rankings' upkeep has looked at changed facts. */
export interface SourceRankingUpkeepTable {
  single: boolean;
  checked_seq: Int8;
}

/**
 * One ranking of a tenant's source groups over a bucket (a calendar month or year, or the last 30
 * or 365 days), as of `built_seq`: the by-source endpoints walk it in volume order instead of
 * grouping millions of facts per request. `scope` is "all" or "unaligned" (the facts that did
 * not pass DMARC only).
 */
export interface SourceRankingBuildTable {
  ranking_id: Int8;
  tenant_id: string;
  scope: string;
  /** "calendar" (a month or a year: it never moves) or "rolling" (moved on day by day). */
  kind: string;
  bucket_start: Int8;
  bucket_end: Int8;
  /** What the rows' start_offset and end_offset are measured from: the bucket where it was built. */
  anchor_start: Int8;
  anchor_end: Int8;
  /** The report domains counted, sorted: the tenant's report domains when it last caught up. */
  report_domains: string[];
  /** Facts with a higher changed_seq were added after the build. */
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
  /** Seconds from the ranking's anchor_start to the first `t` of those rows. */
  start_offset: Int8;
  /** Seconds from the last `t` of those rows to the ranking's anchor_end. */
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
  /** The service behind the base domain of the forward-confirmed name; null when unknown. */
  service_name: ColumnType<string | null, string | null | undefined, string | null>;
  service_type: ColumnType<string | null, string | null | undefined, string | null>;
  /** The AS announcing the address, from the offline database; null when unknown. */
  asn: ColumnType<string | number | null, number | null | undefined, number | null>;
  asn_organization: ColumnType<string | null, string | null | undefined, string | null>;
  /** ISO 3166-1 alpha-2. */
  country: ColumnType<string | null, string | null | undefined, string | null>;
  /** The versions of the map and databases that named it (JSON); null before SourceIpResolved v2. */
  naming_sources: ColumnType<string | null, string | null | undefined, string | null>;
  /**
   * The source_ip_names batch that last changed what names the address's sender (service, base
   * domain, AS, their details, country): a sender ranking built before it is void for the address.
   */
  named_seq: ColumnType<string | number, number | string | undefined, number | string>;
  /** What named service_name: rdns, auth_domain or asn; null when nothing did, or before v3. */
  named_by: ColumnType<string | null, string | null | undefined, string | null>;
  /** The registrable authentication domain that named the service (named_by auth_domain). */
  auth_domain: ColumnType<string | null, string | null | undefined, string | null>;
  /** The special-purpose range holding the address (private, reserved, …); null for a public one. */
  address_range: ColumnType<string | null, string | null | undefined, string | null>;
}

/** One row: the latest batch of source_ip_names, and an epoch that a replay changes. */
export interface SourceIpNameChangeTable {
  single: boolean;
  epoch: string;
  last_seq: Int8;
}

/**
 * What a batch of aggregate_by_sender added to agg_sender_fact (an expiry: what it removed,
 * negated), numbered by the batch, per UTC day: what a query adds to a sender ranking built before.
 */
export interface AggSenderDeltaTable extends Omit<AggSenderFactTable, "t"> {
  seq: Int8;
  day: number;
}

/** One row: the number of the latest batch of aggregate_by_sender (sender-rankings/change-numbers.ts). */
export interface AggSenderChangeCounterTable {
  single: boolean;
  last_seq: Int8;
}

/** The latest batch of aggregate_by_sender that wrote facts of a report domain on a UTC day (t / 86400). */
export interface AggSenderChangeTable {
  domain: string;
  day: number;
  seq: Int8;
  /** Fact rows written there (an update of an existing one counts again). */
  facts: Int8;
}

/** The counters a sender ranking sums, per (domain, source IP) and per (domain, sender). */
interface SenderRankingSums extends SummedCounters {
  forwarded: Int8;
  stopped_quarantine: Int8;
  forwarded_quarantine: Int8;
  stopped_reject: Int8;
  forwarded_reject: Int8;
}

/** A tenant's sender ranking over a bucket, and what it was built from (sender-rankings/). */
export interface SenderRankingBuildTable {
  build_id: Int8;
  tenant_id: string;
  /** "calendar" or "rolling". */
  kind: string;
  bucket_start: Int8;
  bucket_end: Int8;
  /** "report-domain owner" pairs, sorted: the tenant's domains as the build saw them. */
  report_domains: string[];
  built_seq: Int8;
  name_epoch: string;
  built_name_seq: Int8;
  built_at: ColumnType<Date, Date | string | undefined, Date | string>;
  groups: Int8;
  volume: Int8;
  dmarc_pass: Int8;
  groups_quarantine: Int8;
  stopped_quarantine: Int8;
  forwarded_quarantine: Int8;
  groups_reject: Int8;
  stopped_reject: Int8;
  forwarded_reject: Int8;
}

/** A (tenant's domain, source IP)'s sums over a ranking's bucket, and its sender at the build. */
export interface SenderRankingIpTable extends SenderRankingSums {
  build_id: Int8;
  owner: string;
  source_ip: string;
  address: string | null;
  sender: string;
  kind: string;
  service_type: string;
  asn: string;
  asn_organization: string;
  country: string;
}

/** What a (domain, sender) record of a scope ("all", "quarantine", "reject") shows besides its sums. */
export interface SenderRankingPickTable {
  build_id: Int8;
  scope: string;
  owner: string;
  sender: string;
  kind: string;
  service_type: string;
  asn: string;
  asn_organization: string;
  country: string;
}

/** A (tenant's domain, sender)'s sums over a ranking's bucket, and how many addresses it has. */
export interface SenderRankingTable extends SenderRankingSums {
  build_id: Int8;
  owner: string;
  sender: string;
  source_ips: Int8;
  ips_quarantine: Int8;
  ips_reject: Int8;
}

export interface ForensicReportTable {
  /** Increasing with arrival at the service; assigned in event order, so replays repeat it. */
  forensic_id: Int8;
  identity: string;
  domain: string;
  /** Arrival of the reported message, Unix seconds (the event's time when the report lacks it). */
  received: Int8;
  amount: Int8;
  /** JSON of the event's `personal` envelope (sealed: read through the data keys). */
  personal: string;
  /** The tenant whose data key sealed it; null for a report in clear. */
  tenant_id: string | null;
  /** When it was stored, Unix seconds: what retention counts from. */
  recorded: Int8;
  /** The report's Feedback-Type, Auth-Failure and Delivery-Result; null where it had none. */
  feedback_type: string | null;
  auth_failure: string | null;
  delivery_result: string | null;
}

/**
 * Every policy domain a report has named: small (one row per domain, not per row), so that the
 * tenant filter resolves "the tenant's domains and their subdomains" here and filters the big
 * tables with a plain hashed IN.
 */
export interface ReportDomainTable {
  domain: string;
}

/** One row: a token replaced whenever a domain is added to report_domain (migration 020). */
export interface ReportDomainTokenTable {
  single: boolean;
  token: string;
}

/** SMTP TLS sessions per policy domain, policy type and part of a report's time (migration 022). */
export interface TlsPolicyFactTable {
  domain: string;
  policy_type: string;
  t: Int8;
  reports: Int8;
  successful: Int8;
  failed: Int8;
}

/** Failed SMTP TLS sessions per failure-details key and part of a report's time ("" for absent). */
export interface TlsFailureFactTable {
  domain: string;
  policy_type: string;
  result_type: string;
  sending_mta_ip: string;
  receiving_mx_hostname: string;
  receiving_ip: string;
  organization: string;
  t: Int8;
  failed: Int8;
}

/** The tables of the report read models: what reports are projected to, and the rankings. */
export interface ReportSchema {
  agg_domain: AggDomainTable;
  agg_domain_day: AggDomainDayTable;
  agg_domain_day_change: AggDomainDayChangeTable;
  tenant_day_total: TenantDayTotalTable;
  tenant_day_total_build: TenantDayTotalBuildTable;
  agg_organization: AggOrganizationTable;
  agg_source: AggSourceTable;
  agg_source_change: AggSourceChangeTable;
  agg_source_count: AggSourceCountTable;
  agg_sender_fact: AggSenderFactTable;
  agg_sender_delta: AggSenderDeltaTable;
  source_ranking_upkeep: SourceRankingUpkeepTable;
  source_ranking_build: SourceRankingBuildTable;
  source_ranking: SourceRankingTable;
  source_ip_name: SourceIpNameTable;
  source_ip_name_change: SourceIpNameChangeTable;
  agg_sender_change_counter: AggSenderChangeCounterTable;
  agg_sender_change: AggSenderChangeTable;
  sender_ranking_build: SenderRankingBuildTable;
  sender_ranking_ip: SenderRankingIpTable;
  sender_ranking: SenderRankingTable;
  sender_ranking_pick: SenderRankingPickTable;
  forensic_report: ForensicReportTable;
  report_domain: ReportDomainTable;
  report_domain_token: ReportDomainTokenTable;
  tls_policy_fact: TlsPolicyFactTable;
  tls_failure_fact: TlsFailureFactTable;
}

/**
 * What reads of reports see: their tables and the tenancy's, which say whose domains the report
 * domains are (read, never written, here).
 */
export type ReportAndTenancySchema = ReportSchema & TenancySchema;
