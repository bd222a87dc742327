import { type EventStore, type RecordedEvent, readAt } from "@dmarc-ledger/event-store";
import { type Kysely, sql } from "kysely";
import { reversedDomain } from "./membership.js";
import type { EventFeedSchema } from "./schema.js";

export interface FeedRequest {
  tenantId: string;
  /** Events after this position; null: from the first. */
  after: bigint | null;
  limit: number;
  /**
   * Instead of the tenant's feed: every report event of this domain and its subdomains before
   * `before` (the position of the DomainAdded that brought it, say), whoever they were for then.
   * The caller checks that the tenant owns the domain.
   */
  byDomain?: { domain: string; before: bigint };
}

/** Ceiling on the JSON of one page's events (at least one event): a report chunk is up to 1 MiB. */
export const maxPageBytes = 8 * 1024 * 1024;
/** Events read from the store at a time while a page fills. */
const readChunk = 100;

/**
 * The positions of the page, in the store's order. ORDER BY names the table's column: the bare
 * name is the text output column, which would sort "10" before "9".
 */
export async function feedPositions(db: Kysely<EventFeedSchema>, request: FeedRequest): Promise<bigint[]> {
  const after = request.after === null ? sql`true` : sql`position > ${request.after.toString()}::numeric`;
  const { byDomain } = request;
  const { rows } = byDomain
    ? await sql<{ position: string }>`
        select position::text as position from feed_report
        where (reversed_domain = ${reversedDomain(byDomain.domain)}
            or (reversed_domain >= ${`${reversedDomain(byDomain.domain)}.`}
              and reversed_domain < ${`${reversedDomain(byDomain.domain)}/`}))
          and ${after} and position < ${byDomain.before.toString()}::numeric
        order by feed_report.position limit ${request.limit}`.execute(db)
    : await sql<{ position: string }>`
        select position::text as position from feed_entry
        where tenant_id = ${request.tenantId} and ${after}
        order by feed_entry.position limit ${request.limit}`.execute(db);
  return rows.map((row) => BigInt(row.position));
}

/**
 * The page's events from the store, stopping once their documents reach maxPageBytes: the
 * cursor then points after the last one returned, and the rest come on the next page.
 */
export async function readFeedEvents(
  store: EventStore,
  positions: readonly bigint[],
): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  let bytes = 0;
  for (let at = 0; at < positions.length && bytes < maxPageBytes; at += readChunk) {
    for (const event of await readAt(store, positions.slice(at, at + readChunk))) {
      if (bytes >= maxPageBytes) break;
      bytes += JSON.stringify(event.data).length;
      events.push(event);
    }
  }
  return events;
}
