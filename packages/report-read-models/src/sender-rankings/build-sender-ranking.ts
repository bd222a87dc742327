import { type Kysely, type RawBuilder, sql, type Transaction } from "kysely";
import type { ReportAndTenancySchema } from "../schema.js";
import type { Span } from "../source-rankings/buckets.js";
import { limitStatements } from "../source-rankings/build-ranking.js";
import { senderChangeMarks } from "./change-numbers.js";
import { asAnnouncedSenderBuild } from "./delta-coverage.js";
import { ownedDomainsTable, ownedReportDomains, ownershipKey } from "./owned-report-domains.js";
import { dispositionsStoppedBy, senderNameColumns } from "./sender-naming.js";

export interface SenderRankingTarget {
  tenantId: string;
  kind: "calendar" | "rolling";
  bucket: Span;
}

export interface SenderRankingBuilt extends SenderRankingTarget {
  /** (domain, sender) groups ranked. */
  groups: number;
  /** (domain, source IP) rows behind them. */
  addresses: number;
  ms: number;
}

/** The sums a ranking keeps, per (domain, source IP) from facts `f`, and per (domain, sender) from those. */
export const senderRankingSums = [
  "volume",
  "dmarc_pass",
  "unaligned_arc_pass",
  "dkim_aligned",
  "spf_aligned",
  "dkim_pass",
  "spf_pass",
  "forwarded",
  "stopped_quarantine",
  "forwarded_quarantine",
  "stopped_reject",
  "forwarded_reject",
] as const;

/** The totals a ranking's build row keeps over its (domain, sender)s. */
export const senderRankingTotals = [
  "groups",
  "volume",
  "dmarc_pass",
  "groups_quarantine",
  "stopped_quarantine",
  "forwarded_quarantine",
  "groups_reject",
  "stopped_reject",
  "forwarded_reject",
] as const;

/** The totals of senderRankingTotals over sender_ranking rows `alias`, so named, for a select list. */
export function senderRankingTotalsOf(alias: string): RawBuilder<unknown> {
  const c = (column: string) => sql.ref(`${alias}.${column}`);
  const sum = (column: string) => sql`coalesce(sum(${c(column)}), 0) as ${sql.ref(column)}`;
  return sql`count(*) as groups, ${sum("volume")}, ${sum("dmarc_pass")},
    count(*) filter (where ${c("stopped_quarantine")} > 0) as groups_quarantine,
    ${sum("stopped_quarantine")}, ${sum("forwarded_quarantine")},
    count(*) filter (where ${c("stopped_reject")} > 0) as groups_reject,
    ${sum("stopped_reject")}, ${sum("forwarded_reject")}`;
}

/**
 * The sums a ranking keeps, named as senderRankingSums, over rows `alias` shaped as
 * agg_sender_fact's (its facts, or agg_sender_delta's changes to them), for a `group by`.
 */
export function senderSumsOf(alias: string): RawBuilder<unknown> {
  const c = (column: string) => sql.ref(`${alias}.${column}`);
  const stoppedBy = (policy: keyof typeof dispositionsStoppedBy) =>
    sql`not ${c("dmarc_pass")} and ${c("disposition")} = any(${dispositionsStoppedBy[policy]}::text[])`;
  const when = (condition: RawBuilder<unknown>) =>
    sql`sum(case when ${condition} then ${c("volume")} else 0 end)`;
  return sql`sum(${c("volume")}) as volume, ${when(c("dmarc_pass"))} as dmarc_pass,
    sum(${c("unaligned_arc_pass")}) as unaligned_arc_pass, sum(${c("dkim_aligned")}) as dkim_aligned,
    sum(${c("spf_aligned")}) as spf_aligned, sum(${c("dkim_pass")}) as dkim_pass, sum(${c("spf_pass")}) as spf_pass,
    ${when(c("forwarded"))} as forwarded,
    ${when(stoppedBy("quarantine"))} as stopped_quarantine,
    ${when(sql`${stoppedBy("quarantine")} and ${c("forwarded")}`)} as forwarded_quarantine,
    ${when(stoppedBy("reject"))} as stopped_reject,
    ${when(sql`${stoppedBy("reject")} and ${c("forwarded")}`)} as forwarded_reject`;
}

/**
 * Builds a tenant's sender ranking of `bucket` from its facts, in one repeatable-read snapshot
 * that also reads the change marks (so whatever commits meanwhile has a higher number than the
 * build's, and makes it stale), and replaces the rankings of the same bucket. Its rows name each
 * address's sender as source_ip_name names it in that snapshot.
 */
export async function buildSenderRanking(
  db: Kysely<ReportAndTenancySchema>,
  target: SenderRankingTarget,
  statementTimeoutMs: number,
): Promise<SenderRankingBuilt> {
  const started = performance.now();
  // Announced: the fact batches committing after its snapshot write the deltas it will need.
  const counted = await asAnnouncedSenderBuild(db, (connection) =>
    connection
      .transaction()
      .setIsolationLevel("repeatable read")
      .execute((trx) => buildInSnapshot(trx, target, statementTimeoutMs)),
  );
  return { ...target, ...counted, ms: performance.now() - started };
}

/** The build itself, in its repeatable-read transaction: the ranking's rows, then its build row. */
async function buildInSnapshot(
  trx: Transaction<ReportAndTenancySchema>,
  target: SenderRankingTarget,
  statementTimeoutMs: number,
): Promise<{ groups: number; addresses: number }> {
  const { bucket } = target;
  await limitStatements(trx, statementTimeoutMs);
  const marks = await senderChangeMarks(trx);
  const domains = await ownedReportDomains(trx, target.tenantId);
  const { rows } = await sql<{ id: string }>`select nextval('sender_ranking_id_seq')::text as id`.execute(
    trx,
  );
  const id = rows[0]!.id;
  const addresses = await sql`
    insert into sender_ranking_ip (build_id, owner, source_ip, address, sender, kind, service_type, asn,
      asn_organization, country, ${sql.join(senderRankingSums.map((c) => sql.ref(c)))})
    select ${id}::bigint, s.owner, s.source_ip, s.source_ip::inet, ip.sender, ip.kind, ip.service_type, ip.asn,
      ip.asn_organization, ip.country, ${sql.join(senderRankingSums.map((c) => sql.ref(`s.${c}`)))}
    from (
      select d.owner, f.source_ip, ${senderSumsOf("f")}
      from agg_sender_fact f join ${ownedDomainsTable(domains)} as d(domain, owner) on d.domain = f.domain
      where f.t >= ${bucket.start} and f.t <= ${bucket.end}
      group by d.owner, f.source_ip
    ) s
    left join source_ip_name n on n.source_ip = s.source_ip
    cross join lateral (select ${senderNameColumns("n")}) ip
    -- A sender's addresses together in the table: a page with decided ranges reads them.
    order by s.owner, ip.sender`.execute(trx);
  const groups = await insertSenderGroups(trx, id);
  // The picks join five groupings of the same addresses, estimated at a row or so each: a
  // nested loop over them was quadratic (over 2 minutes for 90 days at 1M rows); hashed, seconds.
  await sql`select set_config('enable_nestloop', 'off', true)`.execute(trx);
  for (const scope of ["all", "quarantine", "reject"] as const) await insertPicks(trx, id, scope);
  await sql`select set_config('enable_nestloop', 'on', true)`.execute(trx);
  await sql`delete from sender_ranking_pick where build_id in (${replaced(target)})`.execute(trx);
  await sql`delete from sender_ranking where build_id in (${replaced(target)})`.execute(trx);
  await sql`delete from sender_ranking_ip where build_id in (${replaced(target)})`.execute(trx);
  await sql`delete from sender_ranking_build where build_id in (${replaced(target)})`.execute(trx);
  await sql`insert into sender_ranking_build (build_id, tenant_id, kind, bucket_start, bucket_end,
      report_domains, built_seq, name_epoch, built_name_seq, ${sql.join(senderRankingTotals.map((c) => sql.ref(c)))})
    select ${id}::bigint, ${target.tenantId}, ${target.kind}, ${bucket.start}::bigint, ${bucket.end}::bigint,
      ${ownershipKey(domains)}::text[], ${marks.factSeq}::bigint, ${marks.nameEpoch}, ${marks.nameSeq}::bigint,
      ${senderRankingTotalsOf("r")}
    from sender_ranking r where r.build_id = ${id}::bigint`.execute(trx);
  return {
    groups,
    addresses: Number(addresses.numAffectedRows ?? 0),
  };
}

/**
 * The address sources of a ranking's (domain, sender)s as rows aliased `i`: all of them, or only
 * those of the groups in table `only` (columns owner and sender), by the (build, owner, sender)
 * index (a semi-join or a hash join scanned the whole ranking's addresses: 3,175,103 at 10M
 * facts, 1.4 to 4 s a statement). `condition` filters them.
 */
const rankingAddresses = (
  id: string,
  only: string | undefined,
  condition: RawBuilder<unknown> = sql`true`,
) =>
  only
    ? sql`${sql.table(only)} g cross join lateral (select * from sender_ranking_ip i
        where i.build_id = ${id}::bigint and i.owner = g.owner and i.sender = g.sender and ${condition}) i`
    : sql`sender_ranking_ip i where i.build_id = ${id}::bigint and ${condition}`;

/**
 * Sums every (domain, sender) of a ranking (or only those in table `only`) from its addresses
 * into sender_ranking. Returns how many it wrote.
 */
export async function insertSenderGroups(
  trx: Transaction<ReportAndTenancySchema>,
  id: string,
  only?: string,
): Promise<number> {
  const result = await sql`insert into sender_ranking (build_id, owner, sender, source_ips, ips_quarantine,
      ips_reject, ${sql.join(senderRankingSums.map((c) => sql.ref(c)))})
    select ${id}::bigint, i.owner, i.sender, count(*), count(*) filter (where i.stopped_quarantine > 0),
      count(*) filter (where i.stopped_reject > 0), ${sql.join(senderRankingSums.map((c) => sql`sum(${sql.ref(`i.${c}`)})`))}
    from ${rankingAddresses(id, only)} group by i.owner, i.sender`.execute(trx);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * The picks of every (domain, sender) of a scope (or only of those in table `only`, with columns
 * owner and sender), over its addresses with messages in the scope, weighed by those messages:
 * as the grouping picks them (the value with the most messages, ties to the smallest bytewise;
 * the kind, the smallest of its addresses').
 */
export async function insertPicks(
  trx: Transaction<ReportAndTenancySchema>,
  id: string,
  scope: "all" | "quarantine" | "reject",
  only?: string,
): Promise<void> {
  const weightColumn = scope === "all" ? "volume" : `stopped_${scope}`;
  const weight = sql.ref(weightColumn);
  const most = (column: string) => sql`(select distinct on (owner, sender) owner, sender, value from (
      select owner, sender, ${sql.ref(column)} as value, sum(${weight}) as n from ips group by 1, 2, 3
    ) v order by owner, sender, n desc, value collate "C")`;
  await sql`insert into sender_ranking_pick (build_id, scope, owner, sender, kind, service_type, asn,
      asn_organization, country)
    with ips as materialized (
      select i.owner, i.sender, i.kind, i.service_type, i.asn, i.asn_organization, i.country,
        ${sql.ref(`i.${weightColumn}`)}
      from ${rankingAddresses(id, only, sql`${sql.ref(`i.${weightColumn}`)} > 0`)}
    )
    select ${id}::bigint, ${scope}, k.owner, k.sender, k.kind, st.value, an.value, ao.value, co.value
    from (select owner, sender, min(kind) as kind from ips group by 1, 2) k
    join ${most("service_type")} st using (owner, sender)
    join ${most("asn")} an using (owner, sender)
    join ${most("asn_organization")} ao using (owner, sender)
    join ${most("country")} co using (owner, sender)`.execute(trx);
}

const replaced = (target: SenderRankingTarget) =>
  sql`select build_id from sender_ranking_build where tenant_id = ${target.tenantId}
    and bucket_start = ${target.bucket.start}::bigint and bucket_end = ${target.bucket.end}::bigint`;

/** Drops one ranking and its rows. */
export async function dropSenderRanking(db: Kysely<ReportAndTenancySchema>, buildId: string): Promise<void> {
  await db.transaction().execute(async (trx: Transaction<ReportAndTenancySchema>) => {
    await sql`delete from sender_ranking_pick where build_id = ${buildId}::bigint`.execute(trx);
    await sql`delete from sender_ranking where build_id = ${buildId}::bigint`.execute(trx);
    await sql`delete from sender_ranking_ip where build_id = ${buildId}::bigint`.execute(trx);
    await sql`delete from sender_ranking_build where build_id = ${buildId}::bigint`.execute(trx);
  });
}
