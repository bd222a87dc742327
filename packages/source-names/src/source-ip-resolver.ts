import { setMaxListeners } from "node:events";
import { type EventStore, type ExpectedRevision, WrongExpectedVersionError } from "@dmarc-ledger/event-store";
import { decodeEvent, newEvent, type SourceIpResolved, streams } from "@dmarc-ledger/events";
import { startCheckpointedWorker } from "@dmarc-ledger/projection-engine";
import { DnsLookupError, type SpfResolver } from "@dmarc-ledger/safe-spf";
import type { Kysely } from "kysely";
import PQueue from "p-queue";
import pRetry from "p-retry";
import { type AnswerAges, type DueIp, dueAmong, isDue, staleSourceIps } from "./due-source-ips.js";
import { lookupSourceName, type SourceNameAnswer } from "./lookup-source-name.js";
import type { SourceIpNameSchema } from "./schema.js";
import type { SourceNamer } from "./source-namer.js";

export interface SourceIpResolverOptions extends AnswerAges {
  store: EventStore;
  db: Kysely<SourceIpNameSchema>;
  /** One resolver for the whole process: its cache is shared by every lookup. */
  resolver: SpfResolver;
  /**
   * Names each answer (service, AS, country) into the event. Without one the answers carry no
   * naming (tests of the DNS side only; a process always passes one).
   */
  namer?: SourceNamer;
  ratePerSecond: number;
  concurrency: number;
  /** Further attempts after a timeout, with exponential backoff (default 3). */
  timeoutRetries?: number;
  /** The first backoff; it doubles with each attempt (default 1 s). */
  retryDelayMs?: number;
  /** How often answers that came of age are looked for and asked again (default 10 minutes). */
  sweepIntervalMs?: number;
  now?: () => Date;
  onError?: (error: unknown) => void;
  /** Called with every answer appended (for logs). */
  onResolved?: (answer: SourceIpResolved) => void;
}

export interface RunningSourceIpResolver {
  stop(): Promise<void>;
}

const isTimeout = (error: unknown) => error instanceof DnsLookupError && error.code === "timeout";

/**
 * Resolves the source IPs of the reports in the background. It follows the store from its own
 * checkpoint; for every AggregateReportReceived it looks up the IPs that have no answer yet (or
 * whose answer came of age), at most `ratePerSecond` IPs a second and `concurrency` at once, and
 * appends SourceIpResolved to `source-ip-<ip>` with the expected revision: two processes that
 * resolve the same IP at once append one answer, and the other is dropped. A periodic sweep asks
 * again for answers older than the refresh age, and sooner for timeouts.
 */
export function startSourceIpResolver(options: SourceIpResolverOptions): RunningSourceIpResolver {
  const { store, db, resolver } = options;
  const now = options.now ?? (() => new Date());
  const queue = new PQueue({
    concurrency: options.concurrency,
    intervalCap: options.ratePerSecond,
    interval: 1000,
  });
  const inFlight = new Map<string, Promise<void>>();
  let stopped = false;
  // Aborting takes every waiting lookup out of the queue at once (their promises reject).
  const stopping = new AbortController();
  // One listener per waiting lookup: thousands are expected, not a leak.
  setMaxListeners(0, stopping.signal);

  const lookUp = async (ip: string): Promise<SourceNameAnswer> => {
    try {
      return await pRetry(() => lookupSourceName(resolver, ip), {
        retries: options.timeoutRetries ?? 3,
        minTimeout: options.retryDelayMs ?? 1000,
        factor: 2,
        shouldRetry: ({ error }) => !stopped && isTimeout(error),
      });
    } catch (error) {
      if (!(error instanceof DnsLookupError)) throw error;
      return {
        outcome: error.code === "timeout" ? "timeout" : "error",
        ptrNames: [],
        name: null,
        confirmed: false,
      };
    }
  };

  /** Where to append an answer for the IP's stream, or null when its last answer is not due. */
  const streamState = async (stream: string): Promise<{ expected: ExpectedRevision } | null> => {
    const last = (await store.readStream(stream)).at(-1);
    if (!last) return { expected: "no_stream" };
    const previous = decodeEvent(last);
    const fresh =
      previous?.type === "SourceIpResolved" &&
      !isDue(previous.data.outcome, new Date(previous.data.resolvedAt), now(), options);
    return fresh ? null : { expected: last.revision };
  };

  /**
   * Asks DNS for one IP and appends the answer, unless its stream holds one that is not due. An
   * IP the read model has never shown is nearly always new, so its stream is not read first: the
   * append expects no stream, and only when that fails (the projector lags behind another answer)
   * is the stream read and the answer appended after it if it is still wanted.
   */
  const resolveIp = async (ip: string, seenBefore: boolean): Promise<void> => {
    const stream = streams.sourceIp(ip);
    let expected: ExpectedRevision = "no_stream";
    if (seenBefore) {
      const state = await streamState(stream);
      if (!state) return;
      expected = state.expected;
    }
    const answer = await lookUp(ip);
    if (stopped) return;
    const event: SourceIpResolved = {
      ip,
      ...answer,
      resolvedAt: now().toISOString(),
      naming: options.namer?.name(ip, answer) ?? null,
    };
    for (let attempt = 0; ; attempt++) {
      try {
        await store.append(
          stream,
          [newEvent("SourceIpResolved", event, { causedBy: "process:source-ip-resolver" })],
          expected,
        );
        options.onResolved?.(event);
        return;
      } catch (error) {
        if (!(error instanceof WrongExpectedVersionError)) throw error;
        // Another process answered for this IP after we read: its answer stands.
        if (attempt > 0 || expected !== "no_stream") return;
        const state = await streamState(stream);
        if (!state) return;
        expected = state.expected;
      }
    }
  };

  const enqueue = ({ ip, seenBefore }: DueIp): Promise<void> => {
    const running = inFlight.get(ip);
    if (running) return running;
    const task = queue
      .add(
        async () => {
          if (!stopped) await resolveIp(ip, seenBefore);
        },
        { signal: stopping.signal },
      )
      .finally(() => inFlight.delete(ip));
    inFlight.set(ip, task);
    return task;
  };

  const follower = startCheckpointedWorker({
    store,
    db,
    name: "process:source_ip_resolver",
    handles: new Set(["AggregateReportReceived"]),
    onEvents: async (events) => {
      const ips = new Set<string>();
      for (const event of events)
        if (event.type === "AggregateReportReceived")
          for (const row of event.data.rows) ips.add(row.sourceIp);
      const due = await dueAmong(db, [...ips], now(), options);
      await Promise.all(due.map(enqueue));
      // A batch cut short by stop() is seen again from the old checkpoint at the next start.
      return stopped ? "incomplete" : undefined;
    },
    onError: (error) => {
      if (!stopped) options.onError?.(error);
    },
  });

  let sweeping = false;
  const sweep = async () => {
    if (sweeping || stopped) return;
    sweeping = true;
    try {
      for (;;) {
        const stale = await staleSourceIps(db, now(), options, 1000);
        const fresh = stale.filter((ip) => !inFlight.has(ip));
        if (fresh.length === 0 || stopped) break;
        await Promise.all(fresh.map((ip) => enqueue({ ip, seenBefore: true })));
        // The projector records the new answers; until it has, the same IPs would come back.
        if (fresh.length < 1000) break;
      }
    } finally {
      sweeping = false;
    }
  };
  const timer = setInterval(
    () => {
      sweep().catch((error) => {
        if (!stopped) options.onError?.(error);
      });
    },
    options.sweepIntervalMs ?? 10 * 60_000,
  );
  timer.unref();

  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      stopping.abort();
      await follower.stop();
      await queue.onIdle();
    },
  };
}
