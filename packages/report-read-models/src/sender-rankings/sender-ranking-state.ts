import type { AnySchema } from "@dmarc-ledger/db";
import { type Kysely, type Selectable, sql } from "kysely";
import type { ReportAndTenancySchema, SenderRankingBuildTable } from "../schema.js";
import type { Span } from "../source-rankings/buckets.js";
import { senderRankingTotals } from "./build-sender-ranking.js";
import { senderChangeMarks } from "./change-numbers.js";
import { type OwnedReportDomain, ownershipKey } from "./owned-report-domains.js";

const DAY = 86_400;

/** A sender ranking's build row, as the upkeep and the queries read it. */
export interface SenderRankingBuild {
  buildId: string;
  tenantId: string;
  kind: "calendar" | "rolling";
  bucket: Span;
  reportDomains: string[];
  builtSeq: string;
  nameEpoch: string;
  builtNameSeq: string;
  /** When it was built (Unix ms). */
  builtAt: number;
  totals: {
    groups: string;
    volume: string;
    dmarcPass: string;
    quarantine: { groups: string; stopped: string; forwarded: string };
    reject: { groups: string; stopped: string; forwarded: string };
  };
}

/** The tenant's sender rankings. */
export async function senderRankingBuilds(
  handle: Kysely<AnySchema>,
  tenantId: string,
): Promise<SenderRankingBuild[]> {
  const db: Kysely<ReportAndTenancySchema> = handle;
  const rows = await db
    .selectFrom("sender_ranking_build")
    .selectAll()
    .where("tenant_id", "=", tenantId)
    .execute();
  return rows.map((row) => buildOf(row, row.report_domains));
}

/**
 * The tenant's sender rankings that count `domains` (their report domains and owners are those
 * now), compared in the database: a query needs no other, and reading each build's 1,720 pairs
 * (six builds of a 2,000-domain tenant) to compare them here took 20 to 23 ms per request.
 */
export async function senderRankingBuildsCounting(
  handle: Kysely<AnySchema>,
  tenantId: string,
  domains: readonly OwnedReportDomain[],
): Promise<SenderRankingBuild[]> {
  const db: Kysely<ReportAndTenancySchema> = handle;
  const key = ownershipKey(domains);
  const rows = await db
    .selectFrom("sender_ranking_build")
    .select([
      "build_id",
      "tenant_id",
      "kind",
      "bucket_start",
      "bucket_end",
      "built_seq",
      "name_epoch",
      "built_name_seq",
      "built_at",
      ...senderRankingTotals,
    ])
    .where("tenant_id", "=", tenantId)
    .where(sql<boolean>`report_domains = ${key}::text[]`)
    .execute();
  return rows.map((row) => buildOf(row, key));
}

type BuildRow = Omit<Selectable<SenderRankingBuildTable>, "report_domains">;

function buildOf(row: BuildRow, reportDomains: string[]): SenderRankingBuild {
  return {
    buildId: String(row.build_id),
    tenantId: row.tenant_id,
    kind: row.kind as SenderRankingBuild["kind"],
    bucket: { start: Number(row.bucket_start), end: Number(row.bucket_end) },
    reportDomains,
    builtSeq: String(row.built_seq),
    nameEpoch: row.name_epoch,
    builtNameSeq: String(row.built_name_seq),
    builtAt: new Date(row.built_at).getTime(),
    totals: senderRankingTotalsFrom(row),
  };
}

/** A row of senderRankingTotals columns (a build row, or senderRankingTotalsOf's) as a build's totals. */
export function senderRankingTotalsFrom(
  row: Record<(typeof senderRankingTotals)[number], unknown>,
): SenderRankingBuild["totals"] {
  const n = (column: (typeof senderRankingTotals)[number]) => String(row[column]);
  return {
    groups: n("groups"),
    volume: n("volume"),
    dmarcPass: n("dmarc_pass"),
    quarantine: {
      groups: n("groups_quarantine"),
      stopped: n("stopped_quarantine"),
      forwarded: n("forwarded_quarantine"),
    },
    reject: { groups: n("groups_reject"), stopped: n("stopped_reject"), forwarded: n("forwarded_reject") },
  };
}

/**
 * Why a ranking no longer says what a grouping of its bucket's facts would, or null when it
 * still does (read in the caller's snapshot):
 * - `domains`: the tenant's report domains or their owners are not those it counted (a domain
 *   added, removed, or a subdomain now owned by a more specific domain);
 * - `facts`: a batch after its build wrote facts of those domains on a day of its bucket;
 * - `names`: an address it holds was named otherwise since (a replay of the names, whose numbers
 *   start afresh, counts as renaming every address).
 * Approvals are not in a ranking: the queries apply them to what they read.
 */
export async function senderRankingStaleness(
  db: Kysely<AnySchema>,
  build: SenderRankingBuild,
  domains: readonly OwnedReportDomain[],
): Promise<"domains" | "facts" | "names" | null> {
  const key = ownershipKey(domains);
  if (key.length !== build.reportDomains.length || key.some((pair, i) => pair !== build.reportDomains[i]))
    return "domains";
  const { rows: changed } = await sql<{ found: boolean }>`select exists (
      select 1 from agg_sender_change where seq > ${build.builtSeq}::bigint
        and domain = any(${domains.map((d) => d.domain)}::text[])
        and day between ${Math.floor(build.bucket.start / DAY)} and ${Math.floor(build.bucket.end / DAY)}
    ) as found`.execute(db);
  if (changed[0]?.found) return "facts";
  const marks = await senderChangeMarks(db);
  if (marks.nameEpoch !== build.nameEpoch) return "names";
  if (marks.nameSeq === build.builtNameSeq) return null;
  const { rows: renamed } = await sql<{ found: boolean }>`select exists (
      select 1 from source_ip_name n
      join sender_ranking_ip r on r.build_id = ${build.buildId}::bigint and r.source_ip = n.source_ip
      where n.named_seq > ${build.builtNameSeq}::bigint
    ) as found`.execute(db);
  return renamed[0]?.found ? "names" : null;
}

/**
 * Whether what changed since a ranking's build can be added to it at query time (read in the
 * caller's snapshot): facts and renamed addresses can (agg_sender_delta, source_ip_name's
 * numbers); a change of the tenant's report domains or their owners, or a replay of the names
 * (whose numbers start afresh), cannot.
 */
export async function senderRankingPatchable(
  db: Kysely<AnySchema>,
  build: SenderRankingBuild,
  domains: readonly OwnedReportDomain[],
): Promise<boolean> {
  const key = ownershipKey(domains);
  if (key.length !== build.reportDomains.length || key.some((pair, i) => pair !== build.reportDomains[i]))
    return false;
  return (await senderChangeMarks(db)).nameEpoch === build.nameEpoch;
}
