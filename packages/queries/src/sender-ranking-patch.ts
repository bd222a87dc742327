import {
  changedSenderAddresses,
  inListedDomains,
  type OwnedReportDomain,
  type SenderRankingBuild,
  senderRankingSums,
} from "@dmarc-ledger/report-read-models";
import { type Kysely, sql } from "kysely";
import type { QuerySchema } from "./schema.js";
import { approvalOf, rangesDecided } from "./sender-ips.js";
import { type SenderScope, type SenderSums, scopeColumns, senderScopes, senderSums } from "./sender-scope.js";

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

/** An address of the tenant's domain with facts or naming changed since the build: as counted, and now. */
export interface ChangedAddress {
  owner: string;
  sourceIp: string;
  before: AddressSide | null;
  now: AddressSide | null;
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
  const { rows } = await sql<Record<string, string | boolean | null>>`
    with changed as materialized (${changedSenderAddresses(build, domains)}),
    sides as (
      select c.owner, c.source_ip,
        ${sql.join(sideColumns.map((k) => sql`b.${sql.ref(k)} as ${sql.ref(`b_${k}`)}`))},
        ${sql.join(senderRankingSums.map((k) => sql`b.${sql.ref(k)} as ${sql.ref(`b_${k}`)}`))},
        ${sql.join(sideColumns.map((k) => sql`c.${sql.ref(k)} as ${sql.ref(`n_${k}`)}`))},
        ${sql.join(
          senderRankingSums.map(
            (k) => sql`coalesce(b.${sql.ref(k)}, 0) + c.${sql.ref(`d_${k}`)} as ${sql.ref(`n_${k}`)}`,
          ),
        )}
      from changed c
      -- By (build, owner, address): an address sends for many domains.
      left join sender_ranking_ip b on b.build_id = ${id} and b.owner = c.owner and b.address = c.source_ip::inet
        and b.source_ip = c.source_ip
    )
    select v.owner, v.source_ip,
      ${sql.join(["b", "n"].flatMap((p) => sideColumns.map((k) => sql.ref(`v.${p}_${k}`))))},
      ${sql.join(senderRankingSums.map((k) => sql`${sql.ref(`v.n_${k}`)}::text as ${sql.ref(`n_${k}`)}`))},
      ${sql.join(senderRankingSums.map((k) => sql`${sql.ref(`v.b_${k}`)}::text as ${sql.ref(`b_${k}`)}`))},
      ${approvalOf("v", sql`bs.approved`, ranged)} as b_approved,
      ${approvalOf("v", sql`ns.approved`, ranged)} as n_approved
    from sides v
    left join sender_approval bs on bs.domain = v.owner and bs.kind = 'service' and bs.sender = v.b_sender
    left join sender_approval ns on ns.domain = v.owner and ns.kind = 'service' and ns.sender = v.n_sender`.execute(
    db,
  );
  const addresses: ChangedAddress[] = rows.map((row) => {
    const side = (prefix: "b" | "n"): AddressSide | null => {
      if (row[`${prefix}_sender`] === null) return null;
      const sums = senderSums((k) => row[`${prefix}_${k}`] as string);
      if (sums.volume === 0n) return null;
      return {
        sender: row[`${prefix}_sender`] as string,
        kind: row[`${prefix}_kind`] as ScopeView["kind"],
        service_type: row[`${prefix}_service_type`] as string,
        asn: row[`${prefix}_asn`] as string,
        asn_organization: row[`${prefix}_asn_organization`] as string,
        country: row[`${prefix}_country`] as string,
        sums,
        approved: row[`${prefix}_approved`] as boolean | null,
      };
    };
    return {
      owner: row.owner as string,
      sourceIp: row.source_ip as string,
      before: side("b"),
      now: side("n"),
    };
  });
  return { addresses, groups: await patchedGroups(db, build, addresses) };
}

const zeroSums = () => senderSums(() => 0);
export const groupKey = (group: { owner: string; sender: string }) => `${group.owner}\u0000${group.sender}`;

/** In a scope: the address (or group) has messages the scope counts. */
export const inScope = (sums: SenderSums, scope: SenderScope) => sums[scopeColumns(scope).weight] > 0n;

/**
 * The (domain, sender)s holding a changed address, before (their ranking row) and now (that row
 * less the changed addresses as counted, plus them as they stand).
 */
async function patchedGroups(
  db: Kysely<QuerySchema>,
  build: SenderRankingBuild,
  addresses: readonly ChangedAddress[],
): Promise<PatchedSender[]> {
  const touched = new Map<string, PatchedSender>();
  for (const address of addresses)
    for (const side of [address.before, address.now])
      if (side) {
        const group = { owner: address.owner, sender: side.sender };
        touched.set(groupKey(group), { ...group, before: null, now: null });
      }
  const list = [...touched.values()];
  // A probe of the primary key per group (lateral): joined, the planner hashed the whole
  // ranking (57,628 rows at 1M facts: 80 ms for 2,415 groups).
  const { rows } = await sql<Record<string, string>>`select r.owner, r.sender, r.source_ips::text as ips_all,
      r.ips_quarantine::text as ips_quarantine, r.ips_reject::text as ips_reject,
      ${sql.join(senderRankingSums.map((k) => sql`r.${sql.ref(k)}::text as ${sql.ref(k)}`))}
    from unnest(${list.map((g) => g.owner)}::text[], ${list.map((g) => g.sender)}::text[]) as k(owner, sender)
    cross join lateral (select * from sender_ranking r where r.build_id = ${build.buildId}::bigint
      and r.owner = k.owner and r.sender = k.sender) r`.execute(db);
  for (const row of rows) {
    const group = touched.get(groupKey({ owner: row.owner!, sender: row.sender! }))!;
    group.before = {
      sums: senderSums((k) => row[k]!),
      ips: {
        all: BigInt(row.ips_all!),
        quarantine: BigInt(row.ips_quarantine!),
        reject: BigInt(row.ips_reject!),
      },
    };
  }
  const now = new Map<string, GroupSums>();
  for (const group of list)
    now.set(groupKey(group), {
      sums: group.before ? { ...group.before.sums } : zeroSums(),
      ips: group.before ? { ...group.before.ips } : { all: 0n, quarantine: 0n, reject: 0n },
    });
  const apply = (owner: string, side: AddressSide | null, sign: 1n | -1n) => {
    if (!side) return;
    const group = now.get(groupKey({ owner, sender: side.sender }))!;
    for (const k of senderRankingSums) group.sums[k] += sign * side.sums[k];
    for (const scope of senderScopes) if (inScope(side.sums, scope)) group.ips[scope] += sign;
  };
  for (const address of addresses) {
    apply(address.owner, address.before, -1n);
    apply(address.owner, address.now, 1n);
  }
  for (const group of list) {
    const sums = now.get(groupKey(group))!;
    group.now = sums.sums.volume > 0n ? sums : null;
  }
  return list;
}

/** Bytewise order of text, as `collate "C"` orders it. */
export const bytewise = (a: string, b: string) =>
  a === b ? 0 : Buffer.compare(Buffer.from(a), Buffer.from(b));

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
