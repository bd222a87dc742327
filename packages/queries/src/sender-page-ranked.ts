import {
  inListedDomains,
  type OwnedReportDomain,
  ownedReportDomains,
  type SenderRankingBuild,
  type StricterPolicy,
  secondsIn,
  senderRankingBuildsCounting,
  senderRankingPatchable,
  senderRankingTotalsFrom,
  senderRankingTotalsOf,
  symmetricDifference,
} from "@dmarc-ledger/report-read-models";
import { type Kysely, type RawBuilder, sql, type Transaction } from "kysely";
import { offsetOf, type PageQuery } from "./page.js";
import type { QuerySchema } from "./schema.js";
import { approvalOf } from "./sender-ips.js";
import {
  addToTally,
  addWeight,
  bytewise,
  defaultPatchLimit,
  emptyTally,
  type GroupSums,
  groupKey,
  inScope,
  type PatchedSender,
  type PickColumn,
  pickColumns,
  readSenderRankingPatch,
  type ScopeTally,
  type SenderRankingPatch,
  type TallyPart,
  tallyAddress,
  tallyView,
} from "./sender-ranking-patch.js";
import { type SenderScope, type SenderSumName, scopeColumns } from "./sender-scope.js";

export { type SenderScope, scopeColumns };

/**
 * The tenant's sender ranking that answers the period exactly, with what to add to it, or null:
 * one whose bucket differs from the period only where the tenant's domains have no facts, whose
 * domains are the tenant's now, and whose changes since its build (later facts, an expiry,
 * renamed addresses: readSenderRankingPatch) number at most `patchLimit`. Of the rankings that
 * overlap the period, the two closest to it are tried. Asked with the tenant's whole set of
 * domains: a ranking that answers for all of them answers for any domain's rows too.
 */
export async function chooseSenderRanking(
  db: Kysely<QuerySchema>,
  query: PageQuery,
  domains: readonly OwnedReportDomain[],
  patchLimit = defaultPatchLimit,
): Promise<{ build: SenderRankingBuild; patch: SenderRankingPatch } | null> {
  if (domains.length === 0) return null;
  const period = { start: query.start, end: query.end };
  // Only rankings that count the tenant's domains as they are now can answer (patchable).
  const candidates = (await senderRankingBuildsCounting(db, query.tenantId, domains))
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
          where ${inListedDomains(names, "f.domain")} and f.t >= ${span.start} and f.t <= ${span.end}) as found`.execute(
        db,
      );
      if (rows[0]?.found) factsWhereTheyDiffer = true;
    }
    if (factsWhereTheyDiffer || !(await senderRankingPatchable(db, build, domains))) continue;
    const patch = await readSenderRankingPatch(db, build, domains, patchLimit);
    if (patch) return { build, patch };
  }
  return null;
}

/**
 * A ranking as one question reads it: the whole tenant's, or (a domain filter) only the rows of
 * the tenant's domains within the filter; with the (domain, sender)s changed since its build
 * (`patch`) and the totals they make.
 */
export type RankingView = SenderRankingBuild & { owners?: readonly string[]; patch: SenderRankingPatch };

/** Options of a ranked answer. */
export interface RankedOptions {
  /** The most changes since a ranking's build a query adds to it (readSenderRankingPatch). */
  patchLimit?: number;
}

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
  options: RankedOptions = {},
): Promise<T | null> {
  return db
    .transaction()
    .setIsolationLevel("repeatable read")
    .execute(async (trx) => {
      const domains = await ownedReportDomains(trx, query.tenantId);
      const within = query.domain;
      if (within === undefined) {
        const chosen = await chooseSenderRanking(trx, query, domains, options.patchLimit);
        if (!chosen) return null;
        const totals = patchedTotals(chosen.build.totals, chosen.patch);
        return answer(trx, { ...chosen.build, patch: chosen.patch, totals }, domains);
      }
      // Not a domain the tenant's reports count for: grouped (which answers nothing for a domain
      // that is not the tenant's).
      if (!domains.some((d) => d.owner === within)) return null;
      const inside = domains.filter((d) => d.owner === within || d.owner.endsWith(`.${within}`));
      const chosen = await chooseSenderRanking(trx, query, domains, options.patchLimit);
      if (!chosen) return null;
      const owners = [...new Set(inside.map((d) => d.owner))];
      const patch = {
        groups: chosen.patch.groups.filter((g) => owners.includes(g.owner)),
        addresses: chosen.patch.addresses.filter((a) => owners.includes(a.owner)),
      };
      return answer(trx, await ownersView(trx, chosen.build, owners, patch), inside);
    });
}

/** A ranking's totals with what changed since its build: the changed groups' sums, before and now. */
function patchedTotals(
  totals: SenderRankingBuild["totals"],
  patch: SenderRankingPatch,
): SenderRankingBuild["totals"] {
  if (patch.groups.length === 0) return totals;
  const sum = (value: string, read: (group: GroupSums) => bigint) => {
    let n = BigInt(value);
    for (const { before, now } of patch.groups) n += (now ? read(now) : 0n) - (before ? read(before) : 0n);
    return n.toString();
  };
  const counted = (scope: SenderScope) => (group: GroupSums) => (inScope(group.sums, scope) ? 1n : 0n);
  const scope = (policy: StricterPolicy) => ({
    groups: sum(totals[policy].groups, counted(policy)),
    stopped: sum(totals[policy].stopped, (g) => g.sums[`stopped_${policy}`]),
    forwarded: sum(totals[policy].forwarded, (g) => g.sums[`forwarded_${policy}`]),
  });
  return {
    groups: sum(totals.groups, counted("all")),
    volume: sum(totals.volume, (g) => g.sums.volume),
    dmarcPass: sum(totals.dmarcPass, (g) => g.sums.dmarc_pass),
    quarantine: scope("quarantine"),
    reject: scope("reject"),
  };
}

/** The ranking's rows of `owners`, with the totals of those rows (one primary-key range each) and the patch's. */
async function ownersView(
  trx: Transaction<QuerySchema>,
  build: SenderRankingBuild,
  owners: readonly string[],
  patch: SenderRankingPatch,
): Promise<RankingView> {
  const { rows } = await sql<Record<string, string>>`select ${senderRankingTotalsOf("r")}
    from sender_ranking r where r.build_id = ${build.buildId}::bigint and r.owner = any(${owners}::text[])`.execute(
    trx,
  );
  const totals = senderRankingTotalsFrom(rows[0]!);
  return { ...build, owners, patch, totals: patchedTotals(totals, patch) };
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
 * (sender_ranking_pick). Approvals are applied now, as the grouping does: per address, the most
 * specific decided range holding it, else the decision on its sender. Without a decided range
 * that is the decision on the sender, read for the page's records; with one, the page's senders'
 * addresses are read (sender_ranking_ip, a sender's addresses together).
 *
 * With (domain, sender)s changed since the build (`build.patch`), the page is merged: the
 * unchanged rows of a window of the index around the page, and the changed ones as they stand
 * now, each placed by counting the changed ones before it (mergedPage).
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
  const limit = Math.min(query.perPage, groups - offset);
  // A domain's rows are few (its senders): always read from the top, sorted per request.
  const fromBottom = !build.owners && offset + query.perPage / 2 > groups / 2;
  const windowOffset = fromBottom ? groups - offset - limit : offset;
  if (build.patch.groups.length === 0)
    return pageRows(
      trx,
      build,
      scope,
      withRanges,
      rankingWindow(build, scope, !fromBottom, windowOffset, limit),
    );
  const entries = await mergedPage(trx, build, scope, windowOffset, limit, !fromBottom);
  const unchanged = entries.filter((entry) => entry.changed === null);
  const rows = unchanged.length
    ? await pageRows(
        trx,
        build,
        scope,
        withRanges,
        sql`select r.* from sender_ranking r
          join unnest(${unchanged.map((e) => e.owner)}::text[], ${unchanged.map((e) => e.sender)}::text[])
            as k(owner, sender) on k.owner = r.owner and k.sender = r.sender
          where r.build_id = ${build.buildId}::bigint`,
      )
    : [];
  const changed = await changedRows(
    trx,
    build,
    scope,
    entries.flatMap((entry) => (entry.changed ? [entry.changed] : [])),
    withRanges,
  );
  const byKey = new Map([...rows, ...changed].map((row) => [groupKey(row), row]));
  return entries.map((entry) => byKey.get(groupKey(entry))!);
}

/**
 * SQL for `limit` rows of a ranking's `scope` from `offset` on, along its index: in the API's
 * order (`descending`) or the reverse; a domain filter's rows by the primary key, sorted.
 */
function rankingWindow(
  build: RankingView,
  scope: SenderScope,
  descending: boolean,
  offset: number,
  limit: number,
): RawBuilder<unknown> {
  const { weight } = scopeColumns(scope);
  const inScope = scope === "all" ? sql`true` : sql`${sql.ref(`r.${weight}`)} > 0`;
  // A domain's rows are few (its senders): read by the primary key and sorted, not found along
  // the whole ranking's index (the planner would walk it past every other domain's rows).
  return build.owners
    ? sql`select * from (select * from sender_ranking r where r.build_id = ${build.buildId}::bigint
          and r.owner = any(${build.owners}::text[]) and ${inScope} offset 0) r
        order by ${rankOrder(scope, "r", descending)} limit ${limit} offset ${offset}`
    : sql`select * from sender_ranking r where r.build_id = ${build.buildId}::bigint and ${inScope}
        order by ${rankOrder(scope, "r", descending)} limit ${limit} offset ${offset}`;
}

/** The API's order of a scope (descending) or its reverse, over rows aliased `alias`. */
function rankOrder(scope: SenderScope, alias: string, descending: boolean): RawBuilder<unknown> {
  const w = sql.ref(`${alias}.${scopeColumns(scope).weight}`);
  return descending
    ? sql`${w} desc, ${sql.ref(`${alias}.owner`)} collate "C", ${sql.ref(`${alias}.sender`)} collate "C"`
    : sql`${w} asc, ${sql.ref(`${alias}.owner`)} collate "C" desc, ${sql.ref(`${alias}.sender`)} collate "C" desc`;
}

/** A page's (domain, sender), from the ranking or (`changed`) from the patch. */
interface PageEntry {
  owner: string;
  sender: string;
  weight: bigint;
  changed: PatchedSender | null;
}

/** The API's order (weight descending, domain and sender bytewise), or with `descending` false its reverse. */
const entryOrder = (descending: boolean) => (a: PageEntry, b: PageEntry) => {
  const byWeight = a.weight === b.weight ? 0 : a.weight > b.weight ? -1 : 1;
  const order = byWeight || bytewise(a.owner, b.owner) || bytewise(a.sender, b.sender);
  return descending ? order : -order;
};

/**
 * The (domain, sender)s at positions offset … offset + limit of the ranking merged with the
 * patch, in `descending` (the API's) order or its reverse, returned in the API's order. The
 * merged list is the ranking's rows less the changed groups' (k old) plus the changed groups as
 * they stand now (k new). An unchanged row at position p of the ranking is at p − (old before
 * it) + (new before it); a new one ranked r among the new, at (ranking rows before it) − (old
 * before it) + r. Every row that lands in the page lies within the window offset − k new …
 * offset + limit + k old of the ranking, and a new one before that window or after it lands
 * outside the page: one walk of limit + k old + k new rows answers the page.
 */
async function mergedPage(
  trx: Transaction<QuerySchema>,
  build: RankingView,
  scope: SenderScope,
  offset: number,
  limit: number,
  descending: boolean,
): Promise<PageEntry[]> {
  const weight = scopeColumns(scope).weight;
  const order = entryOrder(descending);
  const changedKeys = new Set(build.patch.groups.map(groupKey));
  const entry = (group: PatchedSender, side: GroupSums | null): PageEntry[] =>
    side && inScope(side.sums, scope)
      ? [{ owner: group.owner, sender: group.sender, weight: side.sums[weight], changed: group }]
      : [];
  const old = build.patch.groups.flatMap((g) => entry(g, g.before)).sort(order);
  const now = build.patch.groups.flatMap((g) => entry(g, g.now)).sort(order);
  const from = Math.max(0, offset - now.length);
  const { rows } = await sql<{ owner: string; sender: string; weight: string }>`
    select w.owner, w.sender, ${sql.ref(`w.${weight}`)}::text as weight
    from (${rankingWindow(build, scope, descending, from, offset + limit + old.length - from)}) w`.execute(
    trx,
  );
  const window: PageEntry[] = rows.map((r) => ({ ...r, weight: BigInt(r.weight), changed: null }));
  // How many of a list in this order come before x: a binary search (every list here is sorted).
  const before = (list: readonly PageEntry[], x: PageEntry) => {
    let low = 0;
    let high = list.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (order(list[middle]!, x) < 0) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  const placed: { position: number; entry: PageEntry }[] = [];
  window.forEach((row, i) => {
    if (changedKeys.has(groupKey(row))) return;
    placed.push({ position: from + i - before(old, row) + before(now, row), entry: row });
  });
  now.forEach((row, rank) => {
    placed.push({ position: from + before(window, row) - before(old, row) + rank, entry: row });
  });
  const page = placed
    .filter((p) => p.position >= offset && p.position < offset + limit)
    .sort((a, b) => a.position - b.position)
    .map((p) => p.entry);
  return descending ? page : page.reverse();
}

/**
 * The records of `scope` of changed (domain, sender)s as they stand now: their sums from the
 * patch; their picks, kind and approvals over their addresses now: the ranking's unchanged ones,
 * tallied by the database (a large sender's thousands of addresses are summed there, not sent),
 * and the changed ones of the patch added here.
 */
async function changedRows(
  trx: Transaction<QuerySchema>,
  build: RankingView,
  scope: SenderScope,
  groups: readonly PatchedSender[],
  withRanges: boolean,
): Promise<RankedSenderRow[]> {
  if (groups.length === 0) return [];
  const tallies = new Map<string, ScopeTally>(groups.map((g) => [groupKey(g), emptyTally()]));
  for (const row of await unchangedTallies(trx, build, scope, groups, withRanges)) {
    const tally = tallies.get(groupKey(row))!;
    if (row.picked !== null) addWeight(tally, row.picked, row.value!, BigInt(row.weight!));
    else
      addToTally(tally, {
        ips: BigInt(row.ips),
        kind: row.kind as TallyPart["kind"],
        everyApproved: row.every_approved!,
        everyRefused: row.every_refused!,
        legitimate: BigInt(row.legitimate!),
      });
  }
  for (const address of build.patch.addresses)
    if (address.now) {
      const tally = tallies.get(groupKey({ owner: address.owner, sender: address.now.sender }));
      if (tally) tallyAddress(tally, address.now, scope);
    }
  const { weight, forwarded } = scopeColumns(scope);
  return groups.map((group) => {
    const sums = group.now!.sums;
    const view = tallyView(tallies.get(groupKey(group))!);
    const sum = (name: SenderSumName) => sums[name].toString();
    return {
      owner: group.owner,
      sender: group.sender,
      kind: view.kind,
      service_type: view.service_type,
      asn: view.asn,
      asn_organization: view.asn_organization,
      country: view.country,
      source_ips: view.ips.toString(),
      volume: sum("volume"),
      dmarc_pass: sum("dmarc_pass"),
      unaligned_arc_pass: sum("unaligned_arc_pass"),
      dkim_aligned: sum("dkim_aligned"),
      spf_aligned: sum("spf_aligned"),
      dkim_pass: sum("dkim_pass"),
      spf_pass: sum("spf_pass"),
      forwarded: sum(forwarded),
      legitimate: view.legitimate.toString(),
      weight: sum(weight),
      approved: view.approved,
    };
  });
}

/** A row of unchangedTallies: a group's tally without its picks (`picked` null), or one picked value's weight. */
interface TallyRow {
  owner: string;
  sender: string;
  picked: PickColumn | null;
  value: string | null;
  weight: string | null;
  ips: string;
  kind: string | null;
  every_approved: boolean | null;
  every_refused: boolean | null;
  legitimate: string | null;
}

/**
 * Per changed (domain, sender), the tally of its addresses in the ranking that the patch does not
 * change, with messages in `scope`, approvals read now: one grouping pass with a grouping set per
 * picked column.
 */
async function unchangedTallies(
  trx: Transaction<QuerySchema>,
  build: RankingView,
  scope: SenderScope,
  groups: readonly PatchedSender[],
  withRanges: boolean,
): Promise<TallyRow[]> {
  const { weight, forwarded } = scopeColumns(scope);
  // Only a changed address of a page group's domain can be one of its rows: the others are not
  // sent (at 10,000 rows arrived, thousands of pairs per page).
  const owners = new Set(groups.map((g) => g.owner));
  const changed = build.patch.addresses.filter((address) => owners.has(address.owner));
  const pickedBy = (column: PickColumn) =>
    sql`when grouping(${sql.ref(`a.${column}`)}) = 0 then ${sql.lit(column)}`;
  const pickedValue = (column: PickColumn) =>
    sql`when grouping(${sql.ref(`a.${column}`)}) = 0 then ${sql.ref(`a.${column}`)}`;
  const { rows } = await sql<TallyRow>`
    -- The decision on each sender read once, not once per address (a page's changed senders
    -- held 45,713 addresses at 10M facts: 120 ms of lookups).
    with k as materialized (
      select k.owner, k.sender, decided.approved
      from unnest(${groups.map((g) => g.owner)}::text[], ${groups.map((g) => g.sender)}::text[]) as k(owner, sender)
      left join sender_approval decided
        on decided.domain = k.owner and decided.kind = 'service' and decided.sender = k.sender
    ),
    a as (
      select r.owner, r.sender, r.kind, r.service_type, r.asn, r.asn_organization, r.country,
        ${sql.ref(`r.${weight}`)} as w, ${sql.ref(`r.${forwarded}`)} as fw,
        ${approvalOf("r", sql`k.approved`, withRanges)} as approved
      from k
      join sender_ranking_ip r on r.owner = k.owner and r.sender = k.sender
      where r.build_id = ${build.buildId}::bigint and ${sql.ref(`r.${weight}`)} > 0
        and not exists (select 1 from unnest(${changed.map((c) => c.owner)}::text[],
            ${changed.map((c) => c.sourceIp)}::text[]) as c(owner, source_ip)
          where c.owner = r.owner and c.source_ip = r.source_ip)
    )
    select a.owner, a.sender,
      case ${sql.join(pickColumns.map(pickedBy), sql` `)} end as picked,
      case ${sql.join(pickColumns.map(pickedValue), sql` `)} end as value,
      sum(a.w)::text as weight, count(*)::text as ips, min(a.kind collate "C") as kind,
      bool_and(a.approved is true) as every_approved, bool_and(a.approved is false) as every_refused,
      sum(case when a.approved is true then a.w else a.fw end)::text as legitimate
    from a
    group by grouping sets ((a.owner, a.sender), ${sql.join(
      pickColumns.map((column) => sql`(a.owner, a.sender, ${sql.ref(`a.${column}`)})`),
    )})`.execute(trx);
  return rows;
}

/** The records of the ranking rows `page` selects, with their picks and approvals, in the API's order. */
async function pageRows(
  trx: Transaction<QuerySchema>,
  build: RankingView,
  scope: SenderScope,
  withRanges: boolean,
  page: RawBuilder<unknown>,
): Promise<RankedSenderRow[]> {
  const { weight, forwarded, ips } = scopeColumns(scope);
  const w = (alias: string) => sql.ref(`${alias}.${weight}`);
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
    order by ${rankOrder(scope, "p", true)}`.execute(trx);
  return rows;
}

/**
 * Of the failing messages `policy` would stop, those from approved addresses or forwarded, over
 * the whole ranking: its forwarded ones, plus the rest of those from senders approved as a
 * whole, corrected for the addresses a decided range approves or refuses apart from their
 * sender (looked up by range on the ranking's address index); and for the addresses changed
 * since the build, what they hold now instead of what the ranking counted. Approvals
 * change at any time; this reads them now.
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
          where a.kind = 'service' and a.approved and ${inListedDomains(owners, "a.domain")}), 0)
      ${
        withRanges
          ? sql`+ coalesce((select sum(case when ranged.approved then ${unforwarded("ranged")} else 0 end
                - case when sd.approved is true then ${unforwarded("ranged")} else 0 end)
              from (select distinct on (i.owner, i.source_ip) i.*, a.approved
                from sender_approval a
                join sender_ranking_ip i on i.build_id = ${build.buildId}::bigint and i.owner = a.domain
                  and i.address <<= a.sender::inet
                where a.kind = 'range' and ${inListedDomains(owners, "a.domain")} and ${sql.ref(`i.${weight}`)} > 0
                order by i.owner, i.source_ip, masklen(a.sender::inet) desc) ranged
              left join sender_approval sd
                on sd.domain = ranged.owner and sd.kind = 'service' and sd.sender = ranged.sender), 0)`
          : sql``
      }
    )::text as n`.execute(trx);
  // The totals' forwarded messages are as they stand now (patchedTotals); the approved unforwarded
  // ones of the changed addresses: less what the ranking counted of them, plus theirs now.
  let n = BigInt(rows[0]!.n);
  for (const address of build.patch.addresses) n += address.legitimateChange[policy];
  return n.toString();
}
