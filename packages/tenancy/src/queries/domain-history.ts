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

/** GET history: every event of one of the tenant's domains, in order; null when not the tenant's. */
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
  const events = rows.map((row) => ({ type: row.event_type, data: JSON.parse(row.data) }));
  const descriptions = describeDomainEvents(events);
  return rows.map((row, index) => ({
    Revision: row.revision,
    Event: row.event_type,
    Time: row.time,
    CausedBy: row.caused_by,
    CorrelationId: row.correlation_id,
    Data: events[index]!.data,
    Description: descriptions[index]!,
  }));
}
