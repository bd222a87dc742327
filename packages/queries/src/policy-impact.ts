import { dispositionsStoppedBy, type StricterPolicy } from "@dmarc-ledger/report-read-models";
import { type Kysely, sql } from "kysely";
import type { SenderKind } from "./aggregate-by-sender.js";
import { offsetOf, type PageQuery } from "./page.js";
import type { QuerySchema } from "./schema.js";
import { mostPerSender, ownedReportDomains, rangesDecided, senderIps } from "./sender-ips.js";
import {
  type RankedOptions,
  type RankedSenderRow,
  rankedLegitimateTotal,
  rankedSenderPage,
  withSenderRanking,
} from "./sender-page-ranked.js";

export { dispositionsStoppedBy, type StricterPolicy };

export interface PolicyImpactQuery extends PageQuery {
  policy: StricterPolicy;
}

export interface PolicyImpactRecord {
  Domain: string;
  Service: string;
  ServiceType: string;
  SenderKind: SenderKind;
  Approved: boolean | null;
  /** Of the sender's addresses, those with messages the policy would stop. */
  SourceIPs: string;
  /** Messages that failed DMARC and that the policy would stop (quarantine or reject). */
  Stopped: string;
  /** Of them, forwarded (ARC pass, or a forwarding override reason). */
  Forwarded: string;
  /** Of them, from approved addresses or forwarded: mail the domain's owner wants. */
  LegitimateAtRisk: string;
  /** The rest: mail nobody vouched for. */
  AbuseStopped: string;
}

export interface PolicyImpactTotals {
  /** Every message of the domains in the period, and those that passed DMARC. */
  Volume: string;
  DMARC: string;
  Stopped: string;
  Forwarded: string;
  LegitimateAtRisk: string;
  AbuseStopped: string;
}

export interface PolicyImpact {
  total: number;
  totals: PolicyImpactTotals;
  records: PolicyImpactRecord[];
}

/** A record from a ranked or a grouped row, `stopped` its messages the policy would stop. */
function impactRecord(
  row: Pick<
    RankedSenderRow,
    "owner" | "sender" | "service_type" | "kind" | "approved" | "source_ips" | "forwarded" | "legitimate"
  >,
  stopped: string,
): PolicyImpactRecord {
  return {
    Domain: row.owner,
    Service: row.sender,
    ServiceType: row.service_type,
    SenderKind: row.kind,
    Approved: row.approved,
    SourceIPs: row.source_ips,
    Stopped: stopped,
    Forwarded: row.forwarded,
    LegitimateAtRisk: row.legitimate,
    AbuseStopped: (BigInt(stopped) - BigInt(row.legitimate)).toString(),
  };
}

interface ImpactRow {
  owner: string;
  sender: string;
  kind: SenderKind;
  service_type: string;
  approved: boolean | null;
  source_ips: string;
  stopped: string;
  forwarded: string;
  legitimate: string;
  total: string;
  all_stopped: string;
  all_forwarded: string;
  all_legitimate: string;
}

/**
 * GET policy_impact: per (tenant's domain, sender) the messages that failed DMARC and that
 * `policy` would stop (dispositionsStoppedBy), split into legitimate at risk (from an approved
 * address, or forwarded) and abuse stopped (the rest); by Stopped descending, then domain and
 * sender bytewise; with the totals over every sender. From the tenant's sender ranking that
 * answers the period exactly when there is one (sender-page-ranked.ts), else by grouping.
 */
export async function policyImpact(db: Kysely<QuerySchema>, query: PolicyImpactQuery): Promise<PolicyImpact> {
  return (await policyImpactRanked(db, query)) ?? policyImpactGrouped(db, query);
}

/** policy_impact from a sender ranking, or null when none answers the period exactly. */
export async function policyImpactRanked(
  db: Kysely<QuerySchema>,
  query: PolicyImpactQuery,
  options?: RankedOptions,
): Promise<PolicyImpact | null> {
  return withSenderRanking(
    db,
    query,
    async (trx, build, domains) => {
      const scope = build.totals[query.policy];
      const total = Number(scope.groups);
      const ranges = await rangesDecided(trx, domains);
      const rows = await rankedSenderPage(trx, build, query, query.policy, total, ranges);
      const legitimate = await rankedLegitimateTotal(trx, build, domains, query.policy, ranges);
      return {
        total,
        totals: {
          Volume: build.totals.volume,
          DMARC: build.totals.dmarcPass,
          Stopped: scope.stopped,
          Forwarded: scope.forwarded,
          LegitimateAtRisk: legitimate,
          AbuseStopped: (BigInt(scope.stopped) - BigInt(legitimate)).toString(),
        },
        records: rows.map((row) => impactRecord(row, row.weight)),
      };
    },
    options,
  );
}

/** policy_impact by grouping the period's facts per request. */
export async function policyImpactGrouped(
  db: Kysely<QuerySchema>,
  query: PolicyImpactQuery,
): Promise<PolicyImpact> {
  const domains = await ownedReportDomains(db, query);
  const zero = {
    Volume: "0",
    DMARC: "0",
    Stopped: "0",
    Forwarded: "0",
    LegitimateAtRisk: "0",
    AbuseStopped: "0",
  };
  if (domains.length === 0) return { total: 0, totals: zero, records: [] };
  const stopped = sql`not f.dmarc_pass and f.disposition = any(${dispositionsStoppedBy[query.policy]}::text[])`;
  const ranges = await rangesDecided(db, domains);
  const { rows } = await sql<ImpactRow>`
    with ips as materialized (${senderIps(domains, query, stopped, ranges)}),
    grouped as (
      select i.owner, i.sender, min(i.kind) as kind, count(*) as source_ips, sum(i.volume) as stopped,
        sum(i.forwarded) as forwarded,
        sum(case when i.approved is true then i.volume else i.forwarded end) as legitimate,
        case when bool_and(i.approved is true) then true when bool_and(i.approved is false) then false end
          as approved
      from ips i group by i.owner, i.sender
    ),
    counted as (
      select g.*, count(*) over () as total, sum(g.stopped) over () as all_stopped,
        sum(g.forwarded) over () as all_forwarded, sum(g.legitimate) over () as all_legitimate
      from grouped g
    ),
    page as materialized (
      select * from counted g order by g.stopped desc, g.owner collate "C", g.sender collate "C"
      limit ${query.perPage} offset ${offsetOf(query)}
    ),
    -- The pick over the page's senders' addresses only, not every address of the period.
    page_ips as materialized (select i.* from ips i join page p using (owner, sender)),
    picked_type as materialized (${mostPerSender("service_type", "page_ips")})
    select g.owner, g.sender, g.kind, g.approved, g.source_ips::text as source_ips, g.stopped::text as stopped,
      g.forwarded::text as forwarded, g.legitimate::text as legitimate, g.total::text as total,
      g.all_stopped::text as all_stopped, g.all_forwarded::text as all_forwarded,
      g.all_legitimate::text as all_legitimate, st.value as service_type
    from page g
    join picked_type st using (owner, sender)
    order by g.stopped desc, g.owner collate "C", g.sender collate "C"`.execute(db);
  const { rows: volumes } = await sql<{ volume: string | null; dmarc: string | null }>`
    select sum(f.volume)::text as volume, sum(case when f.dmarc_pass then f.volume else 0 end)::text as dmarc
    from agg_sender_fact f
    where f.domain = any(${domains.map((d) => d.domain)}::text[]) and f.t >= ${query.start} and f.t <= ${query.end}`.execute(
    db,
  );
  const head = rows[0];
  if (!head && query.page > 1) {
    // Past the last page: the totals still hold for the question asked.
    const first = await policyImpactGrouped(db, { ...query, page: 1, perPage: 1 });
    return { total: first.total, totals: first.totals, records: [] };
  }
  const allStopped = head?.all_stopped ?? "0";
  const allLegitimate = head?.all_legitimate ?? "0";
  return {
    total: Number(head?.total ?? 0),
    totals: {
      Volume: volumes[0]?.volume ?? "0",
      DMARC: volumes[0]?.dmarc ?? "0",
      Stopped: allStopped,
      Forwarded: head?.all_forwarded ?? "0",
      LegitimateAtRisk: allLegitimate,
      AbuseStopped: (BigInt(allStopped) - BigInt(allLegitimate)).toString(),
    },
    records: rows.map((row) => impactRecord(row, row.stopped)),
  };
}
