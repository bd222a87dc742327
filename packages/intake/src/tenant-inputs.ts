import { type Kysely, sql } from "kysely";
import type { IngestedItem } from "./ingest.js";
import type { ArchiveStatus, IntakeSchema } from "./schema.js";

/** Whose inputs: the report domains that count for a tenant, and the tenant itself (its uploads). */
export interface InputOwner {
  /** Null: only inputs whose reports name the domains, not the tenant's uploads. */
  tenantId: string | null;
  /** Lower-case report domains (the tenant's domains and their subdomains that reports named). */
  domains: readonly string[];
}

export interface TenantInput {
  sha256: string;
  size: number;
  /** The channel of its first arrival: upload, import, smtp, imap. */
  channel: string;
  status: ArchiveStatus;
  code: string | null;
  reason: string | null;
  /** Only the items of the owner's domains (and rejections): another tenant's reports stay unsaid. */
  items: IngestedItem[];
  timesReceived: number;
  firstSeen: Date;
  lastSeen: Date;
  processedAt: Date | null;
}

/**
 * A tenant's inputs last received in the period, newest first: those whose reports name its
 * domains, and those it sent through the API (a rejected upload names no domain, and its sender
 * must see why). Rejected input that no tenant sent and no domain claims is shown to nobody.
 */
export async function listTenantInputs(
  db: Kysely<IntakeSchema>,
  owner: InputOwner,
  query: { start: Date; end: Date; page: number; perPage: number; status?: ArchiveStatus },
): Promise<{ total: number; records: TenantInput[] }> {
  const domains = [...owner.domains];
  const { rows } = await sql<{
    sha256: string;
    size: string | number;
    channel: string;
    status: ArchiveStatus;
    code: string | null;
    reason: string | null;
    items: string;
    times_received: number;
    first_seen: Date;
    last_seen: Date;
    processed_at: Date | null;
    total: string | number;
  }>`
    with mine as (
      select sha256 from raw_input_domain where domain = any(${domains}::text[])
      union
      select sha256 from raw_input_receipt where tenant_id = ${owner.tenantId})
    select r.sha256, r.size, r.channel, r.status, r.code, r.reason, r.items, r.times_received,
      r.first_seen, r.last_seen, r.processed_at, count(*) over () as total
    from raw_input r join mine on mine.sha256 = r.sha256
    where r.last_seen >= ${query.start} and r.last_seen <= ${query.end}
      ${query.status ? sql`and r.status = ${query.status}` : sql``}
    order by r.last_seen desc, r.sha256
    limit ${query.perPage} offset ${(query.page - 1) * query.perPage}`.execute(db);
  const own = new Set(domains);
  return {
    total: Number(rows[0]?.total ?? 0),
    records: rows.map((row) => ({
      sha256: row.sha256,
      size: Number(row.size),
      channel: row.channel,
      status: row.status,
      code: row.code,
      reason: row.reason,
      items: (JSON.parse(row.items) as IngestedItem[]).filter(
        (item) =>
          item.kind === "rejected" ||
          (item.kind === "tls"
            ? item.domains.some((domain) => own.has(domain))
            : own.has(item.domain.toLowerCase())),
      ),
      timesReceived: row.times_received,
      firstSeen: row.first_seen,
      lastSeen: row.last_seen,
      processedAt: row.processed_at,
    })),
  };
}

/** Whether the input is the owner's (listTenantInputs' rule), whatever its period. */
export async function isTenantInput(
  db: Kysely<IntakeSchema>,
  owner: InputOwner,
  sha256: string,
): Promise<boolean> {
  const { rows } = await sql<{ found: number }>`
    select 1 as found from raw_input_domain where sha256 = ${sha256} and domain = any(${[...owner.domains]}::text[])
    union all
    select 1 from raw_input_receipt where sha256 = ${sha256} and tenant_id = ${owner.tenantId}
    limit 1`.execute(db);
  return rows.length > 0;
}
