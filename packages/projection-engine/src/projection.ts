import type { AnySchema } from "@dmarc-ledger/db";
import type { DomainEvent, EventType } from "@dmarc-ledger/events";
import type { Transaction } from "kysely";

/**
 * A projection turns events into rows of the tables it owns. It is applied batch by batch inside
 * the transaction that also moves its checkpoint, so a crash never applies a batch twice or half.
 * `Schema` is the Kysely schema of the package that defines it: its own tables.
 */
export interface Projection<Schema = AnySchema> {
  readonly name: string;
  /** The tables it owns: emptied before a rebuild, rebuilt beside the live ones by a replay. */
  readonly tables: readonly (keyof Schema & string)[];
  readonly handles: ReadonlySet<EventType>;
  apply(trx: Transaction<Schema>, events: readonly DomainEvent[]): Promise<void>;
}
