import { setMaxListeners } from "node:events";
import {
  type EventStore,
  type ExpectedRevision,
  type PostgresEventStore,
  WrongExpectedVersionError,
} from "@dmarc-ledger/event-store";
import { decodeEvent, newEvent, type SourceIpResolved, streams } from "@dmarc-ledger/events";
import { startCheckpointedWorker } from "@dmarc-ledger/projection-engine";
import { DnsLookupError, type SpfResolver } from "@dmarc-ledger/safe-spf";
import type { Kysely } from "kysely";
import PQueue from "p-queue";
import pRetry from "p-retry";
import { type AuthEvidence, authEvidenceByIp } from "./auth-evidence.js";
import {
  type AnswerAges,
  type DueIp,
  dueAmong,
  isDue,
  outdatedNamings,
  staleSourceIps,
} from "./due-source-ips.js";
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
  /**
   * Whether reverse DNS is asked (default true). Without it every source is still named when
   * first seen, from the offline databases and the reports' evidence (outcome not_asked).
   */
  reverseDns?: boolean;
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

/** Sources named at once at their first sight: appends in flight together. */
const firstSightParallel = 16;

/**
 * New sources' first answers appended in one statement, where the store takes them so: one
 * transaction (and one commit, under the deployment's append lock) for many sources, not one each.
 */
const firstSightPerStatement = 500;

/** The store, when it appends new streams together in a transaction of `db`. */
function batchingStore(store: EventStore, db: object): PostgresEventStore | null {
  const candidate = store as Partial<PostgresEventStore>;
  return typeof candidate.appendNewStreamsWithin === "function" &&
    typeof candidate.holdsEventsIn === "function" &&
    candidate.holdsEventsIn(db)
    ? (store as PostgresEventStore)
    : null;
}

/** Whether DNS gave an answer (a name, or that there is none), not a failure or no question. */
const isDefinitiveAnswer = (outcome: SourceIpResolved["outcome"]) =>
  outcome === "found" || outcome === "no_name" || outcome === "nxdomain";

/** The name of an IP's last definitive answer, as `previous` carries it (a failure keeps it). */
function lastNamed(previous: SourceIpResolved | null): Pick<SourceIpResolved, "name" | "confirmed"> | null {
  if (!previous?.naming?.baseDomain) return null;
  // The base domain is what names; the confirmed name itself is not kept by a failed attempt.
  return { name: previous.naming.baseDomain, confirmed: true };
}

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

  // A stop does not wait for DNS: with no resolver answering, a lookup and its retries take
  // seconds, and its answer would not be appended anyway. The query ends on its own timeout.
  const whenStopped = new Promise<null>((resolve) =>
    stopping.signal.addEventListener("abort", () => resolve(null), { once: true }),
  );

  /** The answer for one IP, or null when the resolver stopped first. */
  const lookUp = async (ip: string): Promise<SourceNameAnswer | null> => {
    try {
      const answering = pRetry(() => lookupSourceName(resolver, ip), {
        retries: options.timeoutRetries ?? 3,
        minTimeout: options.retryDelayMs ?? 1000,
        factor: 2,
        signal: stopping.signal,
        shouldRetry: ({ error }) => !stopped && isTimeout(error),
      });
      // Its rejection after a stop (the abort) is nobody's to handle.
      answering.catch(() => {});
      return await Promise.race([answering, whenStopped]);
    } catch (error) {
      if (stopped) return null;
      if (!(error instanceof DnsLookupError)) throw error;
      return {
        outcome: error.code === "timeout" ? "timeout" : "error",
        ptrNames: [],
        name: null,
        confirmed: false,
      };
    }
  };

  const reverseDns = options.reverseDns ?? true;

  /**
   * Where to append an answer for the IP's stream, with the last answer there, or null when that
   * answer is not due.
   */
  const streamState = async (
    stream: string,
  ): Promise<{ expected: ExpectedRevision; previous: SourceIpResolved | null } | null> => {
    const last = (await store.readStream(stream)).at(-1);
    if (!last) return { expected: "no_stream", previous: null };
    const decoded = decodeEvent(last);
    const previous = decoded?.type === "SourceIpResolved" ? decoded.data : null;
    const fresh = previous && !isDue(previous.outcome, new Date(previous.resolvedAt), now(), options);
    return fresh ? null : { expected: last.revision, previous };
  };

  /**
   * The naming of an answer. A timeout or error names by the last definitive answer's name (it
   * stays in force), and the authentication domain that named the source before is still evidence.
   */
  const namingOf = (
    ip: string,
    answer: SourceNameAnswer,
    previous: SourceIpResolved | null,
    evidence?: AuthEvidence,
  ): SourceIpResolved["naming"] => {
    if (!options.namer) return null;
    const named = isDefinitiveAnswer(answer.outcome) ? answer : (lastNamed(previous) ?? answer);
    const carried = previous?.naming?.authDomain;
    return options.namer.name(ip, named, evidence ?? (carried ? new Map([[carried, 1]]) : undefined));
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
    let previous: SourceIpResolved | null = null;
    if (seenBefore) {
      const state = await streamState(stream);
      if (!state) return;
      ({ expected, previous } = state);
    }
    const answer = await lookUp(ip);
    await options.namer?.ready();
    if (stopped || !answer) return;
    const event: SourceIpResolved = {
      ip,
      ...answer,
      resolvedAt: now().toISOString(),
      naming: namingOf(ip, answer, previous),
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

  /**
   * A source seen for the first time, named at once from the offline databases and the evidence
   * of the reports that showed it, before (and whatever) DNS answers.
   */
  const firstSightAnswer = (ip: string, evidence: AuthEvidence | undefined): SourceIpResolved => {
    const answer: SourceNameAnswer = { outcome: "not_asked", ptrNames: [], name: null, confirmed: false };
    return { ip, ...answer, resolvedAt: now().toISOString(), naming: namingOf(ip, answer, null, evidence) };
  };
  const firstSightEvent = (answer: SourceIpResolved) =>
    newEvent("SourceIpResolved", answer, { causedBy: "process:source-ip-resolver" });

  /** One source's first answer: an append expecting no stream (a source named first keeps it). */
  const nameAtFirstSight = async (answer: SourceIpResolved): Promise<void> => {
    try {
      await store.append(streams.sourceIp(answer.ip), [firstSightEvent(answer)], "no_stream");
      options.onResolved?.(answer);
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError)) throw error;
    }
  };

  /**
   * Thousands of new sources in a batch of reports are common. A PostgreSQL or PGlite store
   * appends them a statement at a time, each stream expecting none (a source another process
   * named first is left out, as a single append would be refused); another store, one append per
   * source, several in flight.
   */
  const nameAllAtFirstSight = async (ips: string[], evidence: Map<string, AuthEvidence>) => {
    await options.namer?.ready();
    const answers = ips.map((ip) => firstSightAnswer(ip, evidence.get(ip)));
    const batching = batchingStore(store, db);
    if (batching) {
      for (let offset = 0; offset < answers.length && !stopped; offset += firstSightPerStatement) {
        const chunk = answers.slice(offset, offset + firstSightPerStatement);
        const results = await db.transaction().execute((trx) =>
          batching.appendNewStreamsWithin(
            trx,
            chunk.map((answer) => ({
              stream: streams.sourceIp(answer.ip),
              events: [firstSightEvent(answer)],
            })),
            { transaction: "fresh" },
          ),
        );
        for (const [index, result] of results.entries())
          if (!(result instanceof Error)) options.onResolved?.(chunk[index]!);
      }
      return;
    }
    for (let offset = 0; offset < answers.length && !stopped; offset += firstSightParallel)
      await Promise.all(answers.slice(offset, offset + firstSightParallel).map(nameAtFirstSight));
  };

  const follower = startCheckpointedWorker({
    store,
    db,
    name: "process:source_ip_resolver",
    handles: new Set(["AggregateReportReceived"]),
    onEvents: async (events) => {
      const ips = new Set<string>();
      const rows = events.flatMap((event) =>
        event.type === "AggregateReportReceived" ? event.data.rows : [],
      );
      for (const row of rows) ips.add(row.sourceIp);
      const due = await dueAmong(db, [...ips], now(), options);
      const unseen = due.filter((d) => !d.seenBefore).map((d) => d.ip);
      // Without a namer there is nothing to say before DNS answers.
      const namedFirst = options.namer !== undefined;
      if (namedFirst && unseen.length > 0) await nameAllAtFirstSight(unseen, authEvidenceByIp(rows));
      // The first sight appended an answer: DNS is asked after it, as of a source seen before.
      if (reverseDns)
        await Promise.all(
          due.map(({ ip, seenBefore }) => enqueue({ ip, seenBefore: seenBefore || namedFirst })),
        );
      // A batch cut short by stop() is seen again from the old checkpoint at the next start.
      return stopped ? "incomplete" : undefined;
    },
    onError: (error) => {
      if (!stopped) options.onError?.(error);
    },
  });

  /**
   * Names a source again with today's maps and databases, from the last answer its stream holds
   * (its DNS answer and time copied, so DNS is asked again no sooner): an upgrade renames what
   * was named before it, as events, so a replay gives the same names.
   */
  const rename = async (ip: string, sources: string): Promise<void> => {
    const stream = streams.sourceIp(ip);
    const last = (await store.readStream(stream)).at(-1);
    const decoded = last && decodeEvent(last);
    if (!last || decoded?.type !== "SourceIpResolved") return;
    const previous = decoded.data;
    if (!previous.naming || JSON.stringify(previous.naming.sources) === sources) return;
    const event: SourceIpResolved = { ...previous, naming: namingOf(ip, previous, previous) };
    try {
      await store.append(
        stream,
        [newEvent("SourceIpResolved", event, { causedBy: "process:source-ip-resolver:rename" })],
        last.revision,
      );
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError)) throw error;
    }
  };

  /** Renames every source named by other maps or databases, a thousand at a time. */
  const renameOutdated = async () => {
    if (!options.namer) return;
    const sources = JSON.stringify(options.namer.sources);
    let previousBatch = "";
    while (!stopped) {
      const outdated = await outdatedNamings(db, sources, 1000);
      // The projector records the new namings behind the appends: the same batch again means
      // it has not yet, and the next sweep looks again.
      if (outdated.length === 0 || outdated.join() === previousBatch) break;
      previousBatch = outdated.join();
      await options.namer.ready();
      for (let offset = 0; offset < outdated.length && !stopped; offset += firstSightParallel)
        await Promise.all(
          outdated.slice(offset, offset + firstSightParallel).map((ip) => rename(ip, sources)),
        );
      if (outdated.length < 1000) break;
    }
  };

  let sweeping = false;
  const sweep = async () => {
    if (sweeping || stopped) return;
    sweeping = true;
    try {
      await renameOutdated();
      if (!reverseDns) return;
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
  // An upgrade's renaming starts with the process, not ten minutes later.
  const firstSweep = renameOutdated().catch((error) => {
    if (!stopped) options.onError?.(error);
  });

  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      stopping.abort();
      await follower.stop();
      await firstSweep;
      await queue.onIdle();
    },
  };
}
