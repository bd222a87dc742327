import {
  changedSenderAddresses,
  inListedDomains,
  type OwnedReportDomain,
  type SenderRankingBuild,
  type StricterPolicy,
  senderRankingSums,
} from "@dmarc-ledger/report-read-models";
import { type Kysely, type RawBuilder, sql } from "kysely";
import type { QuerySchema } from "./schema.js";
import { approvalOf, rangesDecided } from "./sender-ips.js";
import { type SenderScope, type SenderSums, scopeColumns, senderSums } from "./sender-scope.js";

const DAY = 86_400;

/** What a record of one scope shows besides the sums: picked over the addresses with messages in it. */
export interface ScopeView {
  /** Addresses with messages in the scope. */
  ips: bigint;
  kind: "service" | "base_domain" | "asn" | "unknown";
  service_type: string;
  asn: string;
  asn_organization: string;
  country: string;
  /** true when every such address is approved, false when every one is refused, else null. */
  approved: boolean | null;
  /** Of the scope's messages, those from approved addresses or forwarded. */
  legitimate: bigint;
}

/** A (domain, sender)'s sums and, per scope, its addresses with messages in it. */
export interface GroupSums {
  sums: SenderSums;
  ips: Record<SenderScope, bigint>;
}

/** The (domain, sender)s whose sums changed since a ranking's build: before and now (null: none). */
export interface PatchedSender {
  owner: string;
  sender: string;
  before: GroupSums | null;
  now: GroupSums | null;
}

/** One address's sender, naming, sums and approval (read now). */
export interface AddressSide {
  sender: string;
  kind: ScopeView["kind"];
  service_type: string;
  asn: string;
  asn_organization: string;
  country: string;
  sums: SenderSums;
  approved: boolean | null;
}

/**
 * An address of the tenant's domain with facts or naming changed since the build: as it stands
 * now (null: no messages), and by how much its approved unforwarded stopped messages changed.
 */
export interface ChangedAddress {
  owner: string;
  sourceIp: string;
  now: AddressSide | null;
  legitimateChange: Record<StricterPolicy, bigint>;
}

/** What a query adds to a ranking: the addresses changed since its build and the (domain, sender)s holding them. */
export interface SenderRankingPatch {
  groups: PatchedSender[];
  addresses: ChangedAddress[];
}

/** How many deltas and renamed addresses a query adds to a ranking at most; beyond, it groups. */
export const defaultPatchLimit = 20_000;

const sideColumns = ["sender", "kind", "service_type", "asn", "asn_organization", "country"] as const;

/**
 * What changed for a ranking since its build, read in the caller's snapshot, or null when it is
 * more than `limit` deltas or renamed addresses (the caller groups instead):
 * - the facts of later batches of aggregate_by_sender, and those an expiry removed (negated), of
 *   the domains' report domains on the bucket's days (agg_sender_delta, numbered after the build);
 * - the addresses the ranking holds that source_ip_names named otherwise since.
 * Per changed address, its row as the ranking counted it and as it stands now (the deltas added,
 * the current naming); per (domain, sender) holding one, its ranking row less the addresses'
 * rows as counted plus theirs now. The cost follows the changes, not the senders' size.
 */
export async function readSenderRankingPatch(
  db: Kysely<QuerySchema>,
  build: SenderRankingBuild,
  domains: readonly OwnedReportDomain[],
  limit = defaultPatchLimit,
): Promise<SenderRankingPatch | null> {
  const names = domains.map((d) => d.domain);
  const owners = [...new Set(domains.map((d) => d.owner))];
  const firstDay = Math.floor(build.bucket.start / DAY);
  const lastDay = Math.floor(build.bucket.end / DAY);
  const { rows: counted } = await sql<{ deltas: number; renamed: number }>`select
      (select count(*) from (select 1 from agg_sender_delta x where ${inListedDomains(names, "x.domain")}
        and x.seq > ${build.builtSeq}::bigint and x.day between ${firstDay} and ${lastDay}
        limit ${limit + 1}) d)::integer as deltas,
      (select count(*) from (select 1 from source_ip_name n
        join sender_ranking_ip r on r.build_id = ${build.buildId}::bigint and r.source_ip = n.source_ip
        where n.named_seq > ${build.builtNameSeq}::bigint and ${inListedDomains(owners, "r.owner")}
        limit ${limit + 1}) r)::integer as renamed`.execute(db);
  const { deltas, renamed } = counted[0]!;
  if (deltas + renamed > limit) return null;
  if (deltas + renamed === 0) return { groups: [], addresses: [] };
  const id = sql`${build.buildId}::bigint`;
  // Most tenants decide no range: then an address's approval is its sender's, a hash join.
  const ranged = await rangesDecided(db, domains);
  const sums = senderRankingSums;
  // A side counts when it has messages (as senderSums' volume ≠ 0); in a scope when its weight > 0.
  const moved = (
    prefix: "b" | "n",
    sign: 1 | -1,
  ) => sql`select owner, ${sql.ref(`${prefix}_sender`)} as sender,
      ${sql.join(sums.map((k) => sql`${sql.lit(sign)} * ${sql.ref(`${prefix}_${k}`)} as ${sql.ref(k)}`))},
      ${sql.join(
        (["volume", "stopped_quarantine", "stopped_reject"] as const).map(
          (k) => sql`case when ${sql.ref(`${prefix}_${k}`)} > 0 then ${sql.lit(sign)} else 0 end`,
        ),
      )}
    from sides where ${sql.ref(`${prefix}_sender`)} is not null and ${sql.ref(`${prefix}_volume`)} <> 0`;
  const nulls = (n: number) => sql.join(Array.from({ length: n }, () => sql`null`));
  const beforeApproved = approvalOf("v", sql`bs.approved`, ranged);
  const nowApproved = approvalOf("v", sql`ns.approved`, ranged);
  // One statement, two kinds of rows: each changed address (both sides, with their approvals),
  // and each (domain, sender) holding one, before (its ranking row) and now (that row less the
  // addresses as counted plus them now), summed here: in the API process, that arithmetic on
  // exact integers (BigInt, every sum of every side) cost more than the statement.
  const { rows } = await sql<Record<string, string | boolean | null>>`
    with changed as materialized (${changedSenderAddresses(build, domains)}),
    sides as materialized (
      select c.owner, c.source_ip,
        b.sender as b_sender,
        ${sql.join(sums.map((k) => sql`b.${sql.ref(k)} as ${sql.ref(`b_${k}`)}`))},
        ${sql.join(sideColumns.map((k) => sql`c.${sql.ref(k)} as ${sql.ref(`n_${k}`)}`))},
        ${sql.join(sums.map((k) => sql`coalesce(b.${sql.ref(k)}, 0) + c.${sql.ref(`d_${k}`)} as ${sql.ref(`n_${k}`)}`))}
      from changed c
      -- By (build, owner, address): an address sends for many domains.
      left join sender_ranking_ip b on b.build_id = ${id} and b.owner = c.owner and b.address = c.source_ip::inet
        and b.source_ip = c.source_ip
    ),
    moved (owner, sender, ${sql.join(sums.map((k) => sql.ref(k)))}, ips_all, ips_quarantine, ips_reject) as (
      ${moved("b", -1)} union all ${moved("n", 1)}
    ),
    grouped as (
      select owner, sender, ${sql.join(sums.map((k) => sql`sum(${sql.ref(k)}) as ${sql.ref(k)}`))},
        sum(ips_all) as ips_all, sum(ips_quarantine) as ips_quarantine, sum(ips_reject) as ips_reject
      from moved group by owner, sender
    )
    select 'address' as row_kind, v.owner, v.source_ip,
      ${sql.join(sideColumns.map((k) => sql.ref(`v.n_${k}`)))},
      ${sql.join(sums.map((k) => sql`${sql.ref(`v.n_${k}`)}::text as ${sql.ref(`n_${k}`)}`))},
      ${nowApproved} as n_approved,
      ${sql.join(
        (["quarantine", "reject"] as const).map(
          (policy) =>
            sql`(${approvedUnforwarded("n", nowApproved, policy)} - ${approvedUnforwarded("b", beforeApproved, policy)})::text
              as ${sql.ref(`legitimate_${policy}`)}`,
        ),
      )},
      null::boolean as had_before, ${sql.join(groupColumns.map((k) => sql`null::text as ${sql.ref(k)}`))}
    from sides v
    left join sender_approval bs on bs.domain = v.owner and bs.kind = 'service' and bs.sender = v.b_sender
    left join sender_approval ns on ns.domain = v.owner and ns.kind = 'service' and ns.sender = v.n_sender
    union all
    select 'group', g.owner, null, g.sender, ${nulls(sideColumns.length - 1)},
      ${sql.join(sums.map((k) => sql`(coalesce(r.${sql.ref(k)}, 0) + g.${sql.ref(k)})::text`))}, null, null, null,
      r.build_id is not null, r.source_ips::text, r.ips_quarantine::text, r.ips_reject::text,
      (coalesce(r.source_ips, 0) + g.ips_all)::text, (coalesce(r.ips_quarantine, 0) + g.ips_quarantine)::text,
      (coalesce(r.ips_reject, 0) + g.ips_reject)::text, ${sql.join(sums.map((k) => sql`r.${sql.ref(k)}::text`))}
    from grouped g
    -- A probe of the primary key per group: joined, the planner hashed the whole ranking.
    left join lateral (select * from sender_ranking r where r.build_id = ${id} and r.owner = g.owner
      and r.sender = g.sender) r on true`.execute(db);
  const addresses: ChangedAddress[] = [];
  const groups: PatchedSender[] = [];
  const ips = (row: Record<string, unknown>, prefix: "b" | "n") => ({
    all: BigInt(row[`${prefix}_ips_all`] as string),
    quarantine: BigInt(row[`${prefix}_ips_quarantine`] as string),
    reject: BigInt(row[`${prefix}_ips_reject`] as string),
  });
  for (const row of rows) {
    if (row.row_kind === "group") {
      // Column names are the first branch's: n_sender holds the group's sender, n_<sum> its sums now.
      const now = senderSums((k) => row[`n_${k}`] as string);
      groups.push({
        owner: row.owner as string,
        sender: row.n_sender as string,
        before: row.had_before
          ? { sums: senderSums((k) => row[`b_${k}`] as string), ips: ips(row, "b") }
          : null,
        now: now.volume > 0n ? { sums: now, ips: ips(row, "n") } : null,
      });
      continue;
    }
    let parsed: SenderSums | null = null;
    addresses.push({
      owner: row.owner as string,
      sourceIp: row.source_ip as string,
      now:
        BigInt(row.n_volume as string) === 0n
          ? null
          : {
              sender: row.n_sender as string,
              kind: row.n_kind as ScopeView["kind"],
              service_type: row.n_service_type as string,
              asn: row.n_asn as string,
              asn_organization: row.n_asn_organization as string,
              country: row.n_country as string,
              // Read when a page shows its sender: most changed addresses' senders are not on it.
              get sums() {
                parsed ??= senderSums((k) => row[`n_${k}`] as string);
                return parsed;
              },
              approved: row.n_approved as boolean | null,
            },
      legitimateChange: {
        quarantine: BigInt(row.legitimate_quarantine as string),
        reject: BigInt(row.legitimate_reject as string),
      },
    });
  }
  return { addresses, groups };
}

/** The columns only readSenderRankingPatch's group rows fill: addresses per scope, and the sums before. */
const groupColumns = [
  "b_ips_all",
  "b_ips_quarantine",
  "b_ips_reject",
  "n_ips_all",
  "n_ips_quarantine",
  "n_ips_reject",
  ...senderRankingSums.map((k) => `b_${k}`),
];

/**
 * An address side's stopped messages that are unforwarded and approved (as legitimateOf less
 * its forwarded ones): what LegitimateAtRisk counts of it beyond the forwarded.
 */
const approvedUnforwarded = (prefix: "b" | "n", approved: RawBuilder<unknown>, policy: StricterPolicy) => {
  const c = (k: string) => sql.ref(`v.${prefix}_${k}`);
  return sql`case when ${approved} is true and ${c(`stopped_${policy}`)} > 0 and ${c("volume")} <> 0
    then ${c(`stopped_${policy}`)} - ${c(`forwarded_${policy}`)} else 0 end`;
};

export const groupKey = (group: { owner: string; sender: string }) => `${group.owner}\u0000${group.sender}`;

/** In a scope: the address (or group) has messages the scope counts. */
export const inScope = (sums: SenderSums, scope: SenderScope) => sums[scopeColumns(scope).weight] > 0n;

/**
 * Bytewise order of text, as `collate "C"` orders it. Below U+D800, UTF-16 code units order as
 * UTF-8 bytes do, so the first differing unit decides; a surrogate or a unit above it there is
 * compared encoded (a page's merge sorts thousands of names: encoding each took most of its time).
 */
export function bytewise(a: string, b: string): number {
  if (a === b) return 0;
  const shorter = Math.min(a.length, b.length);
  for (let i = 0; i < shorter; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 || y >= 0xd800) return Buffer.compare(Buffer.from(a), Buffer.from(b));
    return x < y ? -1 : 1;
  }
  return a.length < b.length ? -1 : 1;
}

/** An address's messages of `scope` from approved addresses or forwarded. */
export const legitimateOf = (side: AddressSide | null, scope: SenderScope): bigint =>
  side && inScope(side.sums, scope)
    ? side.approved === true
      ? side.sums[scopeColumns(scope).weight]
      : side.sums[scopeColumns(scope).forwarded]
    : 0n;

/** The naming columns a scope's view picks by weight. */
export const pickColumns = ["service_type", "asn", "asn_organization", "country"] as const;
export type PickColumn = (typeof pickColumns)[number];

/**
 * What a scope's view is picked from, summed over some addresses with messages in the scope.
 * Tallies add up, so the addresses a ranking already holds can be tallied by the database and
 * only the changed ones here.
 */
export interface ScopeTally {
  ips: bigint;
  /** The smallest kind, bytewise; null while no address is tallied. */
  kind: ScopeView["kind"] | null;
  everyApproved: boolean;
  everyRefused: boolean;
  legitimate: bigint;
  /** Per picked column, the scope's messages per value. */
  weights: Record<PickColumn, Map<string, bigint>>;
}

export const emptyTally = (): ScopeTally => ({
  ips: 0n,
  kind: null,
  everyApproved: true,
  everyRefused: true,
  legitimate: 0n,
  weights: { service_type: new Map(), asn: new Map(), asn_organization: new Map(), country: new Map() },
});

/** What some addresses add to a tally besides their weights (an address: one of them). */
export interface TallyPart {
  ips: bigint;
  kind: ScopeView["kind"];
  everyApproved: boolean;
  everyRefused: boolean;
  legitimate: bigint;
}

/** Adds `part` to `tally`. */
export function addToTally(tally: ScopeTally, part: TallyPart): void {
  tally.ips += part.ips;
  if (tally.kind === null || bytewise(part.kind, tally.kind) < 0) tally.kind = part.kind;
  tally.everyApproved &&= part.everyApproved;
  tally.everyRefused &&= part.everyRefused;
  tally.legitimate += part.legitimate;
}

/** Adds `weight` messages to `value` of a picked column. */
export function addWeight(tally: ScopeTally, column: PickColumn, value: string, weight: bigint): void {
  const byValue = tally.weights[column];
  byValue.set(value, (byValue.get(value) ?? 0n) + weight);
}

/** Adds an address to `tally` when it has messages in `scope`. */
export function tallyAddress(tally: ScopeTally, address: AddressSide, scope: SenderScope): void {
  if (!inScope(address.sums, scope)) return;
  addToTally(tally, {
    ips: 1n,
    kind: address.kind,
    everyApproved: address.approved === true,
    everyRefused: address.approved === false,
    legitimate: legitimateOf(address, scope),
  });
  const weight = address.sums[scopeColumns(scope).weight];
  for (const column of pickColumns) addWeight(tally, column, address[column], weight);
}

/** The view a tally gives: each picked column's value with the most messages, ties to the smallest bytewise. */
export function tallyView(tally: ScopeTally): ScopeView {
  const most = (column: PickColumn) =>
    [...tally.weights[column]].sort((a, b) =>
      a[1] === b[1] ? bytewise(a[0], b[0]) : a[1] > b[1] ? -1 : 1,
    )[0]![0];
  return {
    ips: tally.ips,
    kind: tally.kind!,
    service_type: most("service_type"),
    asn: most("asn"),
    asn_organization: most("asn_organization"),
    country: most("country"),
    approved: tally.everyApproved ? true : tally.everyRefused ? false : null,
    legitimate: tally.legitimate,
  };
}
