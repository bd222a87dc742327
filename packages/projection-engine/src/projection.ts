import type { DomainEvent, EventType } from "@dmarc-ledger/events";
import type { Transaction } from "kysely";
import type { ReadModelSchema } from "../schema.js";

/**
 * A projection turns events into rows of the tables it owns. It is applied batch by batch inside
 * the transaction that also moves its checkpoint, so a crash never applies a batch twice or half.
 */
export interface Projection {
  readonly name: string;
  /** The tables it owns: emptied before a rebuild. */
  readonly tables: readonly (keyof ReadModelSchema)[];
  readonly handles: ReadonlySet<EventType>;
  apply(trx: Transaction<ReadModelSchema>, events: readonly DomainEvent[]): Promise<void>;
}
