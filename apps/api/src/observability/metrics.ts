import type { AnySchema } from "@dmarc-ledger/db";
import type { EventStore, PostgresEventStore } from "@dmarc-ledger/event-store";
import { streamCategory } from "@dmarc-ledger/events";
import { createIntakeMetrics, type IntakeMetrics } from "@dmarc-ledger/intake/metrics";
import type { Projection } from "@dmarc-ledger/projection-engine";
import { registerProjectionGauges } from "@dmarc-ledger/projection-engine/metrics";
import { reverseDnsHealth, sourceIpOutcomeCounts } from "@dmarc-ledger/report-read-models";
import { registerSafeSpfGauges } from "@dmarc-ledger/safe-spf-service/metrics";
import type { Kysely } from "kysely";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

export interface ServiceMetrics {
  registry: Registry;
  httpRequestDuration: Histogram<"method" | "route" | "status">;
  eventsAppended: Counter<"category">;
  /** Inputs by channel and outcome: uploads here, SMTP and IMAP where `start` runs the intake. */
  intake: IntakeMetrics;
  /** List answers served from the answer cache (hit), computed (miss), or computed with it off. */
  answers: Counter<"outcome">;
  /** List reads by where they went, with a replica: the replica, or the primary (behind a write). */
  listReads: Counter<"from">;
}

/**
 * One registry per service (tests run several in one process): HTTP requests by route and
 * status, and, read when scraped, the projections' lag and the Safe SPF statuses. Given
 * `registry` (the process metrics a starting service serves already: processMetrics of
 * @dmarc-ledger/process), they go into it; otherwise into a new one, with the process metrics.
 */
export function createServiceMetrics(
  sources: {
    db: Kysely<AnySchema>;
    store: EventStore;
    projections: readonly Projection[];
  },
  given?: Registry,
): ServiceMetrics {
  const registry = given ?? new Registry();
  if (!given) collectDefaultMetrics({ register: registry });

  const httpRequestDuration = new Histogram({
    name: "http_request_duration_seconds",
    help: "HTTP requests by route template and status, with their latency.",
    labelNames: ["method", "route", "status"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const eventsAppended = new Counter({
    name: "eventstore_events_appended_total",
    help: "Events this process appended to the event store, by stream category.",
    labelNames: ["category"] as const,
    registers: [registry],
  });

  const answers = new Counter({
    name: "api_answer_cache_requests_total",
    help: "List answers served from the answer cache (hit) or computed (miss, or off when the cache is off).",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });

  const listReads = new Counter({
    name: "api_list_reads_total",
    help: "List reads with a replica configured, by where they went: the replica, or the primary while the replica was behind the caller's write.",
    labelNames: ["from"] as const,
    registers: [registry],
  });

  registerProjectionGauges(registry, sources);
  registerSafeSpfGauges(registry, sources.db);
  registerSourceNameGauges(registry, sources.db);

  return {
    registry,
    httpRequestDuration,
    eventsAppended,
    intake: createIntakeMetrics(registry),
    answers,
    listReads,
  };
}

/**
 * The store, counting the events appended through it by stream category. A PostgreSQL store keeps
 * its transactional side (appendWithin, holdsEventsIn): without it the intake would not see that
 * its events share the archive's database, and every upload and SMTP message in `start` took the
 * slower path of three commits. An append within a transaction is counted when it returns, so
 * one whose transaction then rolls back (a failed group commit, tried again input by input) is
 * counted too.
 */
export function countingAppends<S extends EventStore>(store: S, counter: Counter<"category">): S {
  const count = (stream: string, events: number) =>
    counter.inc({ category: streamCategory(stream) ?? "other" }, events);
  const counting: EventStore = {
    append: async (stream, events, expected) => {
      const result = await store.append(stream, events, expected);
      count(stream, events.length);
      return result;
    },
    readStream: (stream, options) => store.readStream(stream, options),
    readAll: (from, limit) => store.readAll(from, limit),
    subscribe: (from, options) => store.subscribe(from, options),
    headPosition: () => store.headPosition(),
    close: () => store.close(),
    // The adapter's own read by position (the events feed), where it has one.
    ...(store.readAt ? { readAt: (positions: readonly bigint[]) => store.readAt!(positions) } : {}),
  };
  if (!isPostgresEventStore(store)) return counting as S;
  const transactional: PostgresEventStore = {
    ...counting,
    appendWithin: async (trx, stream, events, expected, options) => {
      const result = await store.appendWithin(trx, stream, events, expected, options);
      count(stream, events.length);
      return result;
    },
    appendNewStreamsWithin: async (trx, appends, options) => {
      const results = await store.appendNewStreamsWithin(trx, appends, options);
      // Counted as appended when they were, as appendWithin counts its own.
      for (const [index, result] of results.entries())
        if (!(result instanceof Error)) count(appends[index]!.stream, appends[index]!.events.length);
      return results;
    },
    readStreamWithin: (trx, stream, options) => store.readStreamWithin(trx, stream, options),
    holdsEventsIn: (db) => store.holdsEventsIn(db),
  };
  return transactional as unknown as S;
}

function isPostgresEventStore(store: EventStore): store is EventStore & PostgresEventStore {
  const candidate = store as Partial<PostgresEventStore>;
  return typeof candidate.appendWithin === "function" && typeof candidate.holdsEventsIn === "function";
}

/**
 * Report sources by the outcome of their latest answer (not_asked: named without DNS so far), and
 * the reverse-DNS lookups of the last hour answered and failed: resolvers that do not answer show
 * as failures with no answers.
 */
function registerSourceNameGauges(registry: Registry, db: Kysely<AnySchema>): void {
  new Gauge({
    name: "source_ip_names",
    help: "Report sources by the outcome of their latest answer (found, no_name, nxdomain, timeout, error, not_asked).",
    labelNames: ["outcome"] as const,
    registers: [registry],
    async collect() {
      const counts = await sourceIpOutcomeCounts(db as never);
      this.reset();
      for (const [outcome, count] of counts) this.set({ outcome }, count);
    },
  });
  new Gauge({
    name: "source_ip_reverse_dns_lookups_last_hour",
    help: "Reverse-DNS lookups of report sources in the last hour, by result (answered, failed).",
    labelNames: ["result"] as const,
    registers: [registry],
    async collect() {
      const health = await reverseDnsHealth(db as never);
      this.set({ result: "answered" }, health.answered);
      this.set({ result: "failed" }, health.failed);
    },
  });
}
