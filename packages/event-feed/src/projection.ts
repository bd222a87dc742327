import { eventTypes } from "@dmarc-ledger/events";
import type { Projection } from "@dmarc-ledger/projection-engine";
import type { Transaction } from "kysely";
import { namedTenantOf, reportDomainOf, reversedDomain, suffixesOf } from "./membership.js";
import type { EventFeedSchema } from "./schema.js";

/** Rows per insert statement: two parameters a row, far below PostgreSQL's 65,535. */
const rowsPerInsert = 5000;

/**
 * Indexes the global order for the feed: each event under the tenant it is for, and each report
 * event under its report domain. A report is for the owner of its domain (or of the nearest
 * parent) at the report's place in the order, as this projection has followed DomainAdded and
 * DomainRemoved up to it: what a position gave once it gives again, and a replay builds the
 * same rows. The reports that arrived before a domain was added are read by domain (readFeed).
 */
export const eventFeedProjection: Projection<EventFeedSchema> = {
  name: "event_feed",
  tables: ["feed_entry", "feed_report", "feed_domain_owner"],
  handles: new Set(eventTypes),
  async apply(trx, events) {
    const owners = await ownersOfReportDomains(trx, events);
    const entries: { tenant_id: string; position: string }[] = [];
    const reports: { reversed_domain: string; position: string }[] = [];
    for (const event of events) {
      const position = event.position.toString();
      if (event.type === "DomainAdded") {
        owners.set(event.data.domain, event.data.tenantId);
        await trx
          .insertInto("feed_domain_owner")
          .values({ domain: event.data.domain, tenant_id: event.data.tenantId })
          .onConflict((oc) => oc.column("domain").doUpdateSet({ tenant_id: event.data.tenantId }))
          .execute();
      } else if (event.type === "DomainRemoved") {
        owners.delete(event.data.domain);
        await trx.deleteFrom("feed_domain_owner").where("domain", "=", event.data.domain).execute();
      }
      const reportDomain = reportDomainOf(event);
      if (reportDomain !== null) {
        reports.push({ reversed_domain: reversedDomain(reportDomain), position });
        const owner = suffixesOf(reportDomain)
          .map((suffix) => owners.get(suffix))
          .find((tenant) => tenant !== undefined);
        if (owner !== undefined) entries.push({ tenant_id: owner, position });
        continue;
      }
      const tenantId = namedTenantOf(event);
      if (tenantId !== null) entries.push({ tenant_id: tenantId, position });
    }
    for (let at = 0; at < entries.length; at += rowsPerInsert) {
      await trx
        .insertInto("feed_entry")
        .values(entries.slice(at, at + rowsPerInsert))
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
    for (let at = 0; at < reports.length; at += rowsPerInsert) {
      await trx
        .insertInto("feed_report")
        .values(reports.slice(at, at + rowsPerInsert))
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
  },
};

/**
 * The owners, before the batch, of every domain a report of the batch could count for (its
 * domain and its parents): one read a batch, then kept in step with the batch's own changes.
 */
async function ownersOfReportDomains(
  trx: Transaction<EventFeedSchema>,
  events: Parameters<Projection["apply"]>[1],
): Promise<Map<string, string>> {
  const candidates = new Set<string>();
  for (const event of events) {
    const domain = reportDomainOf(event);
    if (domain !== null) for (const suffix of suffixesOf(domain)) candidates.add(suffix);
  }
  if (candidates.size === 0) return new Map();
  const rows = await trx
    .selectFrom("feed_domain_owner")
    .select(["domain", "tenant_id"])
    .where("domain", "in", [...candidates])
    .execute();
  return new Map(rows.map((row) => [row.domain, row.tenant_id]));
}
