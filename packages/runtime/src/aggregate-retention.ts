import type { AnySchema } from "@dmarc-ledger/db";
import type { EventStore } from "@dmarc-ledger/event-store";
import { type AggregateFactsExpired, type EventMetadata, newEvent, streams } from "@dmarc-ledger/events";
import type { PersonalDataPolicy } from "@dmarc-ledger/personal-data";
import { waitForProjections } from "@dmarc-ledger/projection-engine";
import { countExpiringFacts, reportProjections } from "@dmarc-ledger/report-read-models";
import type { Kysely } from "kysely";

const DAY_MS = 86_400_000;

/** How long a run waits for the aggregate read models to reach the store's head before counting. */
const catchUpWaitMs = 30_000;

/** One tenant's aggregate facts expired by a run: its event, with its position. */
export interface AggregateExpiry {
  event: AggregateFactsExpired;
  position: bigint;
}

/** The projections that drop expired aggregate facts: they must have caught up before a count. */
const aggregateProjections = reportProjections.filter((projection) =>
  projection.handles.has("AggregateFactsExpired"),
);

/**
 * The first day (YYYY-MM-DD, UTC) whose facts a tenant keeping them `days` days keeps at `now`:
 * a day goes once it lies wholly before `now` minus `days` days.
 */
export function aggregateCutoffDay(now: Date, days: number): string {
  const day = Math.floor((now.getTime() - days * DAY_MS) / DAY_MS);
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

/**
 * Aggregate retention (docs/privacy.md): for each tenant whose policy sets `aggregateDays`, the
 * facts of its report domains counted on days before the cutoff day are counted and, when there
 * are any, AggregateFactsExpired is appended to its `personal-data-` stream; the aggregate
 * projections drop them when they apply it. The read models are awaited up to the store's head
 * first, so that the count is of what they hold (and an expiry of the run before is applied, not
 * counted twice); when they do not get there in time, this run leaves the aggregates to the next.
 */
export async function expireAggregateFacts(
  runtime: { db: Kysely<AnySchema>; store: EventStore },
  tenants: readonly { tenantId: string; policy: PersonalDataPolicy; domains: readonly string[] }[],
  now: Date,
  metadata: EventMetadata,
): Promise<AggregateExpiry[]> {
  const due = tenants.filter((tenant) => tenant.policy.aggregateDays !== null && tenant.domains.length > 0);
  if (due.length === 0) return [];
  const head = await runtime.store.headPosition();
  if (head !== null && !(await waitForProjections(runtime.db, aggregateProjections, head, catchUpWaitMs)))
    return [];
  const done: AggregateExpiry[] = [];
  for (const { tenantId, policy, domains } of due) {
    const before = aggregateCutoffDay(now, policy.aggregateDays!);
    const sorted = [...domains].sort();
    const removed = await countExpiringFacts(runtime.db, sorted, before);
    if (Object.values(removed.rows).every((rows) => rows === 0)) continue;
    const event: AggregateFactsExpired = { tenantId, before, domains: sorted, removed };
    const { position } = await runtime.store.append(
      streams.personalData(tenantId),
      [newEvent("AggregateFactsExpired", event, metadata)],
      "any",
    );
    done.push({ event, position });
  }
  return done;
}

/** The rows an expiry removed, over every aggregate table. */
export const aggregateRowsOf = (event: AggregateFactsExpired) =>
  Object.values(event.removed.rows).reduce((sum, rows) => sum + rows, 0);
