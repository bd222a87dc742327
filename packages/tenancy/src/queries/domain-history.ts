import { type Kysely, sql } from "kysely";
import type { TenancySchema } from "../schema.js";
import { describeDomainEvents } from "./describe-domain-event.js";

export interface HistoryRecord {
  Revision: string;
  Event: string;
  Time: string;
  CausedBy: string;
  CorrelationId: string | null;
  Data: unknown;
  /** The event in words; a changed Safe SPF record as its diff against the one before. */
  Description: string;
}

/**
 * Which of a domain's events are the tenant's: those of the times it had the domain, from each
 * DomainAdded to it through the DomainRemoved that took it away. A domain another tenant had
 * before keeps that tenant's events on its stream; they are not this tenant's to read.
 */
function ownedByTenant(events: readonly { type: string; data: Record<string, unknown> }[], tenantId: string) {
  let owner: unknown = null;
  return events.map((event) => {
    if (event.type === "DomainAdded") owner = event.data.tenantId;
    const owned = owner === tenantId;
    if (event.type === "DomainRemoved") owner = null;
    return owned;
  });
}

/**
 * GET history: every event of one of the tenant's domains while it was the tenant's, in order;
 * null when not the tenant's. The tenant is named by its name.
 */
export async function domainHistory(
  db: Kysely<TenancySchema>,
  tenantId: string,
  domain: string,
): Promise<HistoryRecord[] | null> {
  const owned = await db
    .selectFrom("domain")
    .select("domain")
    .where("domain", "=", domain)
    .where("tenant_id", "=", tenantId)
    .executeTakeFirst();
  if (!owned) return null;
  const tenant = await db
    .selectFrom("tenant")
    .select("name")
    .where("tenant_id", "=", tenantId)
    .executeTakeFirst();
  const rows = await db
    .selectFrom("audit_event")
    .select([
      sql<string>`revision::text`.as("revision"),
      "event_type",
      sql<string>`to_char(recorded_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`.as("time"),
      "caused_by",
      "correlation_id",
      "data",
    ])
    .where("domain", "=", domain)
    .orderBy("revision")
    .execute();
  const all = rows.map((row) => ({ type: row.event_type, data: JSON.parse(row.data) }));
  const kept = ownedByTenant(all, tenantId);
  const ownRows = rows.filter((_, index) => kept[index]);
  const events = all.filter((_, index) => kept[index]);
  // Only the tenant's events are described: a Safe SPF diff never reaches into another's record.
  const descriptions = describeDomainEvents(events, (id) => (id === tenantId && tenant ? tenant.name : id));
  return ownRows.map((row, index) => ({
    Revision: row.revision,
    Event: row.event_type,
    Time: row.time,
    CausedBy: row.caused_by,
    CorrelationId: row.correlation_id,
    Data: events[index]!.data,
    Description: descriptions[index]!,
  }));
}
