import { type ApprovalMembers, approvalMembersLimit } from "@dmarc-ledger/events";
import { ownedDomainsTable, ownedReportDomains, senderOf } from "@dmarc-ledger/report-read-models";
import { type Kysely, sql } from "kysely";
import { offsetOf, type PageQuery } from "./page.js";
import type { QuerySchema } from "./schema.js";

/** The most addresses added since a decision that a record lists (AddedCount counts them all). */
export const addedListLimit = 1_000;

/** GET sender_approvals: one decision in force, and how its service's group changed since. */
export interface SenderApprovalRecord {
  /** The tenant's domain the decision is for. */
  Domain: string;
  Kind: "service" | "range";
  /** The service, as aggregate_by_sender names it, or the range (CIDR). */
  Sender: string;
  Approved: boolean;
  /**
   * How many addresses the service grouped for the domain when decided (over every report kept);
   * null for a range and for a decision taken before they were recorded.
   */
  AddressesAtApproval: number | null;
  /** How many addresses the service groups with mail in the period; null for a range. */
  AddressesNow: number | null;
  /**
   * How many of those it did not group when decided; null when that is unknown: a range, a
   * decision that recorded no addresses, or one whose addresses were more than were recorded.
   */
  AddedCount: number | null;
  /** Those addresses, bytewise, the first addedListLimit; null when AddedCount is. */
  AddedSinceApproval: string[] | null;
}

/** The decisions on `domain` and the tenant's domains below it (`%` and `_` are no wildcards here). */
const atOrBelow = (domain: string) =>
  sql<boolean>`(domain = ${domain} or right(domain, ${domain.length + 1}) = ${`.${domain}`})`;

/** The report domains whose mail counts for the tenant's domain `domain` (not for one below it). */
async function reportDomainsOf(db: Kysely<QuerySchema>, tenantId: string, domain: string) {
  return (await ownedReportDomains(db, tenantId, domain)).filter((d) => d.owner === domain);
}

/**
 * The addresses `service` groups now for the tenant's `domain`, over every report kept, named as
 * aggregate_by_sender names them (senderOf over source_ip_name): what a decision on it records.
 * Sorted bytewise, the first approvalMembersLimit, with their count.
 */
export async function serviceMembers(
  db: Kysely<QuerySchema>,
  tenantId: string,
  domain: string,
  service: string,
): Promise<ApprovalMembers> {
  const domains = await reportDomainsOf(db, tenantId, domain);
  if (domains.length === 0) return { addresses: [], count: 0 };
  const { rows } = await sql<{ source_ip: string; count: string }>`
    with ips as (
      select distinct f.source_ip from agg_sender_fact f
      where f.domain in (select unnest(${domains.map((d) => d.domain)}::text[]))
    )
    select i.source_ip, count(*) over () as count
    from ips i left join source_ip_name n on n.source_ip = i.source_ip
    where ${senderOf("n")} = ${service}
    order by i.source_ip collate "C"
    limit ${approvalMembersLimit}`.execute(db);
  return { addresses: rows.map((r) => r.source_ip), count: Number(rows[0]?.count ?? 0) };
}

/**
 * GET sender_approvals: the decisions in force on the tenant's domains (`domain`: that one and
 * those below it), by domain, kind and sender bytewise; for a service, its addresses when decided,
 * those with mail in the period now, and the ones among them it did not group when decided.
 */
export async function senderApprovals(
  db: Kysely<QuerySchema>,
  query: PageQuery,
): Promise<{ total: number; records: SenderApprovalRecord[] }> {
  const decided = await db
    .selectFrom("sender_approval")
    .select(["domain", "kind", "sender", "approved", "members_count"])
    .select(sql<string>`count(*) over ()`.as("total"))
    .where("tenant_id", "=", query.tenantId)
    .$if(query.domain !== undefined, (q) => q.where(atOrBelow(query.domain!)))
    .orderBy(sql`domain collate "C"`)
    .orderBy("kind")
    .orderBy(sql`sender collate "C"`)
    .limit(query.perPage)
    .offset(offsetOf(query))
    .execute();
  const services = decided.filter((d) => d.kind === "service");
  const changes = await groupsNow(db, query, services);
  const records = decided.map((d): SenderApprovalRecord => {
    const base = { Domain: d.domain, Kind: d.kind, Sender: d.sender, Approved: d.approved };
    if (d.kind === "range")
      return {
        ...base,
        AddressesAtApproval: null,
        AddressesNow: null,
        AddedCount: null,
        AddedSinceApproval: null,
      };
    const now = changes.get(`${d.domain} ${d.sender}`);
    const known = d.members_count !== null && d.members_count <= approvalMembersLimit;
    return {
      ...base,
      AddressesAtApproval: d.members_count,
      AddressesNow: now?.now ?? 0,
      AddedCount: known ? (now?.added_count ?? 0) : null,
      AddedSinceApproval: known ? (now?.added ?? []) : null,
    };
  });
  let total = Number(decided[0]?.total ?? 0);
  if (decided.length === 0 && query.page > 1) {
    const counted = await db
      .selectFrom("sender_approval")
      .select(sql<string>`count(*)`.as("n"))
      .where("tenant_id", "=", query.tenantId)
      .$if(query.domain !== undefined, (q) => q.where(atOrBelow(query.domain!)))
      .executeTakeFirst();
    total = Number(counted?.n ?? 0);
  }
  return { total, records };
}

interface GroupNow {
  owner: string;
  sender: string;
  now: number;
  added_count: number;
  added: string[] | null;
}

/**
 * Per decided (domain, service): its addresses with mail in the period, and those not among the
 * addresses recorded at its decision (sender_approval_member). One pass over the period's facts
 * of the services' domains.
 */
async function groupsNow(
  db: Kysely<QuerySchema>,
  query: PageQuery,
  services: readonly { domain: string; sender: string }[],
): Promise<Map<string, GroupNow>> {
  const found = new Map<string, GroupNow>();
  if (services.length === 0) return found;
  const owners = new Set(services.map((s) => s.domain));
  const domains = (await ownedReportDomains(db, query.tenantId, query.domain)).filter((d) =>
    owners.has(d.owner),
  );
  if (domains.length === 0) return found;
  const { rows } = await sql<GroupNow>`
    with ips as (
      select distinct d.owner, f.source_ip from agg_sender_fact f
      join ${ownedDomainsTable(domains)} as d(domain, owner) on d.domain = f.domain
      where f.t >= ${query.start} and f.t <= ${query.end}
    ),
    members as (
      select i.owner, ${senderOf("n")} as sender, i.source_ip
      from ips i left join source_ip_name n on n.source_ip = i.source_ip
    )
    select m.owner, m.sender, count(*)::int as now,
      (count(*) filter (where r.source_ip is null))::int as added_count,
      (array_agg(m.source_ip order by m.source_ip collate "C") filter (where r.source_ip is null))[1:${sql.lit(addedListLimit)}]
        as added
    from members m
    join unnest(${services.map((s) => s.domain)}::text[], ${services.map((s) => s.sender)}::text[])
      as s(owner, sender) on s.owner = m.owner and s.sender = m.sender
    left join sender_approval_member r
      on r.domain = m.owner and r.service = m.sender and r.source_ip = m.source_ip
    group by m.owner, m.sender`.execute(db);
  for (const row of rows) found.set(`${row.owner} ${row.sender}`, { ...row, added: row.added ?? [] });
  return found;
}
