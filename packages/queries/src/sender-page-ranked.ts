import {
  type OwnedReportDomain,
  ownedReportDomains,
  type SenderRankingBuild,
  type StricterPolicy,
  secondsIn,
  senderRankingBuilds,
  senderRankingStaleness,
  symmetricDifference,
} from "@dmarc-ledger/report-read-models";
import { type Kysely, type RawBuilder, sql, type Transaction } from "kysely";
import { offsetOf, type PageQuery } from "./page.js";
import type { QuerySchema } from "./schema.js";

/**
 * Which sums of a sender ranking a page reads: every message (aggregate_by_sender), or the
 * failing messages a stricter policy would stop (policy_impact).
 */
export type SenderScope = "all" | StricterPolicy;

/** The columns of sender_ranking and sender_ranking_ip a scope ranks, counts and weighs by. */
export function scopeColumns(scope: SenderScope): { weight: string; forwarded: string; ips: string } {
  if (scope === "all") return { weight: "volume", forwarded: "forwarded", ips: "source_ips" };
  return { weight: `stopped_${scope}`, forwarded: `forwarded_${scope}`, ips: `ips_${scope}` };
}

/**
 * The tenant's sender ranking that answers the period exactly, or null: one that is current
 * (senderRankingStaleness: same domains, no facts of its days and no naming of its addresses
 * changed since its build) and whose bucket differs from the period only where the tenant's
 * domains have no facts. Of the rankings that overlap the period, the two closest to it are
 * tried. Asked with the tenant's whole set of domains: a ranking current for all of them is
 * current for any domain's rows too.
 */
export async function chooseSenderRanking(
  db: Kysely<QuerySchema>,
  query: PageQuery,
  domains: readonly OwnedReportDomain[],
): Promise<SenderRankingBuild | null> {
  if (domains.length === 0) return null;
  const period = { start: query.start, end: query.end };
  const candidates = (await senderRankingBuilds(db, query.tenantId))
    .filter((build) => build.bucket.start <= period.end && build.bucket.end >= period.start)
    .map((build) => ({ build, differences: symmetricDifference(period, build.bucket) }))
    .sort((a, b) => secondsIn(a.differences) - secondsIn(b.differences))
    .slice(0, 2);
  const names = domains.map((d) => d.domain);
  for (const { build, differences } of candidates) {
    let factsWhereTheyDiffer = false;
    for (const span of differences) {
      // One probe of the primary key (domain, t, …) per domain.
      const { rows } = await sql<{ found: boolean }>`select exists (select 1 from agg_sender_fact f
          where f.domain = any(${names}::text[]) and f.t >= ${span.start} and f.t <= ${span.end}) as found`.execute(
        db,
      );
      if (rows[0]?.found) factsWhereTheyDiffer = true;
    }
    if (factsWhereTheyDiffer) continue;
    if ((await senderRankingStaleness(db, build, domains)) === null) return build;
  }
  return null;
}

/**
 * A ranking as one question reads it: the whole tenant's, or (a domain filter) only the rows of
 * the tenant's domains within the filter, with their totals summed from those rows.
 */
export type RankingView = SenderRankingBuild & { owners?: readonly string[] };

/**
 * Runs `answer` in one repeatable-read snapshot with the ranking chosen in it (so an upkeep
 * replacing the ranking, or facts committing meanwhile, cannot mix two states into one answer),
 * or returns null when no ranking answers the period. With a domain filter (one of the tenant's
 * domains), `answer` gets the report domains within it and the ranking's rows of their owners:
 * the filter's domain and the tenant's domains under it, whose rows hold those reports and no
 * other (a report domain lies under its owner).
 */
export async function withSenderRanking<T>(
  db: Kysely<QuerySchema>,
  query: PageQuery,
  answer: (trx: Transaction<QuerySchema>, build: RankingView, domains: OwnedReportDomain[]) => Promise<T>,
): Promise<T | null> {
  return db
    .transaction()
    .setIsolationLevel("repeatable read")
    .execute(async (trx) => {
      const domains = await ownedReportDomains(trx, query.tenantId);
      const within = query.domain;
      if (within === undefined) {
        const build = await chooseSenderRanking(trx, query, domains);
        return build ? answer(trx, build, domains) : null;
      }
      // Not a domain the tenant's reports count for: grouped (which answers nothing for a domain
      // that is not the tenant's).
      if (!domains.some((d) => d.owner === within)) return null;
      const inside = domains.filter((d) => d.owner === within || d.owner.endsWith(`.${within}`));
      const build = await chooseSenderRanking(trx, query, domains);
      return build
        ? answer(trx, await ownersView(trx, build, [...new Set(inside.map((d) => d.owner))]), inside)
        : null;
    });
}

/** The ranking's rows of `owners`, with the totals of those rows (one primary-key range each). */
async function ownersView(
  trx: Transaction<QuerySchema>,
  build: SenderRankingBuild,
  owners: readonly string[],
): Promise<RankingView> {
  const { rows } = await sql<Record<string, string>>`select count(*)::text as groups,
      coalesce(sum(volume), 0)::text as volume, coalesce(sum(dmarc_pass), 0)::text as dmarc_pass,
      count(*) filter (where stopped_quarantine > 0)::text as groups_quarantine,
      coalesce(sum(stopped_quarantine), 0)::text as stopped_quarantine,
      coalesce(sum(forwarded_quarantine), 0)::text as forwarded_quarantine,
      count(*) filter (where stopped_reject > 0)::text as groups_reject,
      coalesce(sum(stopped_reject), 0)::text as stopped_reject,
      coalesce(sum(forwarded_reject), 0)::text as forwarded_reject
    from sender_ranking where build_id = ${build.buildId}::bigint and owner = any(${owners}::text[])`.execute(
    trx,
  );
  const t = rows[0]!;
  return {
    ...build,
    owners,
    totals: {
      groups: t.groups!,
      volume: t.volume!,
      dmarcPass: t.dmarc_pass!,
      quarantine: {
        groups: t.groups_quarantine!,
        stopped: t.stopped_quarantine!,
        forwarded: t.forwarded_quarantine!,
      },
      reject: { groups: t.groups_reject!, stopped: t.stopped_reject!, forwarded: t.forwarded_reject! },
    },
  };
}

export interface RankedSenderRow {
  owner: string;
  sender: string;
  kind: "service" | "base_domain" | "asn" | "unknown";
  service_type: string;
  asn: string;
  asn_organization: string;
  country: string;
  source_ips: string;
  volume: string;
  dmarc_pass: string;
  unaligned_arc_pass: string;
  dkim_aligned: string;
  spf_aligned: string;
  dkim_pass: string;
  spf_pass: string;
  /** The scope's forwarded messages, and those from approved addresses or forwarded. */
  forwarded: string;
  legitimate: string;
  weight: string;
  approved: boolean | null;
}

/**
 * A page of (domain, sender) records from a ranking, in the API's order (the scope's weight
 * descending, then domain and sender bytewise): a walk along the ranking's index with a limit,
 * from the top for the first half of the records and from the bottom for the second. The kind
 * and the picks (ServiceType, ASN, organisation, country) were picked at the build
 * (sender_ranking_pick: the names have not changed since, or the ranking would not be used).
 * Approvals are applied now, as the grouping does: per address, the most specific decided range
 * holding it, else the decision on its sender. Without a decided range that is the decision on
 * the sender, read for the page's records; with one, the page's senders' addresses are read
 * (sender_ranking_ip, a sender's addresses together).
 */
export async function rankedSenderPage(
  trx: Transaction<QuerySchema>,
  build: RankingView,
  query: PageQuery,
  scope: SenderScope,
  groups: number,
  withRanges: boolean,
): Promise<RankedSenderRow[]> {
  const offset = offsetOf(query);
  if (offset >= groups) return [];
  const { weight, forwarded, ips } = scopeColumns(scope);
  const w = (alias: string) => sql.ref(`${alias}.${weight}`);
  const inScope = scope === "all" ? sql`true` : sql`${w("r")} > 0`;
  const fromBottom = offset + query.perPage / 2 > groups / 2;
  const order = (alias: string, descending: boolean): RawBuilder<unknown> =>
    descending
      ? sql`${w(alias)} desc, ${sql.ref(`${alias}.owner`)} collate "C", ${sql.ref(`${alias}.sender`)} collate "C"`
      : sql`${w(alias)} asc, ${sql.ref(`${alias}.owner`)} collate "C" desc, ${sql.ref(`${alias}.sender`)} collate "C" desc`;
  const limit = Math.min(query.perPage, groups - offset);
  // A domain's rows are few (its senders): read by the primary key and sorted, not found along
  // the whole ranking's index (the planner would walk it past every other domain's rows).
  const page = build.owners
    ? sql`select * from (select * from sender_ranking r where r.build_id = ${build.buildId}::bigint
          and r.owner = any(${build.owners}::text[]) and ${inScope} offset 0) r
        order by ${order("r", true)} limit ${limit} offset ${offset}`
    : fromBottom
      ? sql`select * from sender_ranking r where r.build_id = ${build.buildId}::bigint and ${inScope}
        order by ${order("r", false)} limit ${limit} offset ${groups - offset - limit}`
      : sql`select * from sender_ranking r where r.build_id = ${build.buildId}::bigint and ${inScope}
        order by ${order("r", true)} limit ${limit} offset ${offset}`;
  const approvals = withRanges
    ? sql`select i.owner, i.sender,
          sum(case when a.approved is true then ${w("i")} else ${sql.ref(`i.${forwarded}`)} end) as legitimate,
          case when bool_and(a.approved is true) then true when bool_and(a.approved is false) then false end
            as approved
        from page p
        join sender_ranking_ip i on i.build_id = ${build.buildId}::bigint and i.owner = p.owner and i.sender = p.sender
        left join sender_approval decided
          on decided.domain = i.owner and decided.kind = 'service' and decided.sender = i.sender
        cross join lateral (select coalesce((select r.approved from sender_approval r
            where r.domain = i.owner and r.kind = 'range' and i.address <<= r.sender::inet
            order by masklen(r.sender::inet) desc limit 1), decided.approved) as approved) a
        where ${w("i")} > 0
        group by i.owner, i.sender`
    : sql`select p.owner, p.sender,
          case when decided.approved is true then ${w("p")} else ${sql.ref(`p.${forwarded}`)} end as legitimate,
          decided.approved
        from page p
        left join sender_approval decided
          on decided.domain = p.owner and decided.kind = 'service' and decided.sender = p.sender`;
  const { rows } = await sql<RankedSenderRow>`
    with page as materialized (${page}),
    approvals as materialized (${approvals})
    select p.owner, p.sender, k.kind, k.service_type, k.asn, k.asn_organization, k.country,
      ${sql.ref(`p.${ips}`)}::text as source_ips, p.volume::text as volume,
      p.dmarc_pass::text as dmarc_pass, p.unaligned_arc_pass::text as unaligned_arc_pass,
      p.dkim_aligned::text as dkim_aligned, p.spf_aligned::text as spf_aligned, p.dkim_pass::text as dkim_pass,
      p.spf_pass::text as spf_pass, ${sql.ref(`p.${forwarded}`)}::text as forwarded,
      s.legitimate::text as legitimate, ${w("p")}::text as weight, s.approved
    from page p
    join approvals s using (owner, sender)
    join sender_ranking_pick k on k.build_id = ${build.buildId}::bigint and k.scope = ${scope}
      and k.owner = p.owner and k.sender = p.sender
    order by ${order("p", true)}`.execute(trx);
  return rows;
}

/**
 * Of the failing messages `policy` would stop, those from approved addresses or forwarded, over
 * the whole ranking: its forwarded ones, plus the rest of those from senders approved as a
 * whole, corrected for the addresses a decided range approves or refuses apart from their
 * sender (looked up by range on the ranking's address index). Approvals change at any time;
 * this reads them now.
 */
export async function rankedLegitimateTotal(
  trx: Transaction<QuerySchema>,
  build: RankingView,
  domains: readonly OwnedReportDomain[],
  policy: StricterPolicy,
  withRanges: boolean,
): Promise<string> {
  const { weight, forwarded } = scopeColumns(policy);
  const owners = [...new Set(domains.map((d) => d.owner))];
  const unforwarded = (alias: string) =>
    sql`(${sql.ref(`${alias}.${weight}`)} - ${sql.ref(`${alias}.${forwarded}`)})`;
  const { rows } = await sql<{ n: string }>`select (
      ${build.totals[policy].forwarded}::numeric
      + coalesce((select sum(${unforwarded("r")}) from sender_approval a
          join sender_ranking r on r.build_id = ${build.buildId}::bigint and r.owner = a.domain and r.sender = a.sender
          where a.kind = 'service' and a.approved and a.domain = any(${owners}::text[])), 0)
      ${
        withRanges
          ? sql`+ coalesce((select sum(case when ranged.approved then ${unforwarded("ranged")} else 0 end
                - case when sd.approved is true then ${unforwarded("ranged")} else 0 end)
              from (select distinct on (i.owner, i.source_ip) i.*, a.approved
                from sender_approval a
                join sender_ranking_ip i on i.build_id = ${build.buildId}::bigint and i.owner = a.domain
                  and i.address <<= a.sender::inet
                where a.kind = 'range' and a.domain = any(${owners}::text[]) and ${sql.ref(`i.${weight}`)} > 0
                order by i.owner, i.source_ip, masklen(a.sender::inet) desc) ranged
              left join sender_approval sd
                on sd.domain = ranged.owner and sd.kind = 'service' and sd.sender = ranged.sender), 0)`
          : sql``
      }
    )::text as n`.execute(trx);
  return rows[0]!.n;
}
