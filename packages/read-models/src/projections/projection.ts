import type { DomainEvent, EventType } from "@dmarc-ledger/events";
import type { Transaction } from "kysely";
import type { ReadModelSchema } from "../schema.js";

/**
 * A projection turns events into rows of the tables it owns. It is applied batch by batch inside
 * the transaction that also moves its checkpoint, so a crash never applies a batch twice or half.
 * `Schema` is the tables it writes: another package's projection names its own.
 */
export interface Projection<Schema = ReadModelSchema> {
  readonly name: string;
  /** The tables it owns: emptied before a rebuild. */
  readonly tables: readonly (keyof Schema & string)[];
  readonly handles: ReadonlySet<EventType>;
  apply(trx: Transaction<Schema>, events: readonly DomainEvent[]): Promise<void>;
}

/**
 * A projection of another package, over its own tables, run by this engine beside the others:
 * the engine only names its tables and hands it the batch's transaction, which reaches every
 * table of the database.
 */
export function projectionOfPackage<Schema>(projection: Projection<Schema>): Projection {
  return projection as unknown as Projection;
}
