import {
  type AppendResult,
  type ExpectedRevision,
  type KnownTransactionState,
  type NewEvent,
  type PostgresEventStore,
  type ReadStreamOptions,
  type RecordedEvent,
  WrongExpectedVersionError,
} from "@dmarc-ledger/event-store";
import type { Kysely, Transaction } from "kysely";
import type { EventWriter } from "./ingest.js";
import type { IntakeSchema } from "./schema.js";

/** What one input stores in a transaction of the group: its events and its archive rows. */
export type GroupWork<T> = (writer: EventWriter, trx: Transaction<IntakeSchema>) => Promise<T>;

interface Job {
  work: GroupWork<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** Inputs committed together at most; a bound on how long the append lock is held. */
const maxInputsPerCommit = 16;

/**
 * Group commit for inputs received at the same time (several SMTP connections, import's inputs in
 * flight): what arrives while a transaction is committing goes into the next one, together. An
 * input alone is committed at once, so none waits for company. Per input that spares the begin,
 * the append lock and the commit (about half the round trips of a small report). A failing
 * transaction is tried again input by input, so that one input's failure is its own.
 */
export class CommitGroup {
  private readonly queue: Job[] = [];
  private draining = false;

  constructor(
    private readonly db: Kysely<IntakeSchema>,
    private readonly store: PostgresEventStore,
  ) {}

  commit<T>(work: GroupWork<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({
        work: work as GroupWork<unknown>,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      if (!this.draining) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length > 0) {
        const jobs = this.queue.splice(0, maxInputsPerCommit);
        let results: unknown[];
        try {
          results = await this.transaction(jobs);
        } catch (error) {
          if (jobs.length === 1) {
            jobs[0]!.reject(error);
            continue;
          }
          for (const job of jobs) {
            try {
              job.resolve((await this.transaction([job]))[0]);
            } catch (alone) {
              job.reject(alone);
            }
          }
          continue;
        }
        for (const [index, job] of jobs.entries()) job.resolve(results[index]);
      }
    } finally {
      this.draining = false;
    }
  }

  private transaction(jobs: Job[]): Promise<unknown[]> {
    return this.db.transaction().execute(async (trx) => {
      const writer = new GroupWriter(this.store, trx);
      const results: unknown[] = [];
      for (const job of jobs) {
        results.push(await job.work(writer, trx));
        writer.otherWritesDone();
      }
      return results;
    });
  }
}

/**
 * Appends in the group's transaction, telling the store what it knows: the first append comes
 * before any other write; after one append has returned or met WrongExpectedVersionError, the
 * transaction holds the append lock.
 */
class GroupWriter implements EventWriter {
  private state: KnownTransactionState = "fresh";

  constructor(
    private readonly store: PostgresEventStore,
    private readonly trx: Transaction<IntakeSchema>,
  ) {}

  async append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    const known = this.state;
    // Until this append is known to have taken the lock, nothing is assumed of the next one.
    this.state = "unknown";
    try {
      const result = await this.store.appendWithin(this.trx, stream, events, expected, {
        transaction: known,
      });
      this.state = "locked";
      return result;
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) this.state = "locked";
      throw error;
    }
  }

  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.store.readStreamWithin(this.trx, stream, options);
  }

  /** The input wrote its archive rows: with no append before them, the transaction is not fresh. */
  otherWritesDone(): void {
    if (this.state === "fresh") this.state = "unknown";
  }
}
