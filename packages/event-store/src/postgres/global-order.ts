/**
 * The global order of the PostgreSQL adapter, and why no subscriber skips a late commit.
 *
 * The trap: sequence values are taken when a row is inserted, not when its transaction commits.
 * Transaction A takes position 5, B takes 6 and commits first; a reader that saw 6 and moved its
 * checkpoint past it would never see 5. Filtering on "committed before my snapshot" is not enough
 * when the order is the sequence alone either: a transaction that began earlier (smaller xid) can
 * take a larger sequence value than one that is already visible.
 *
 * The guard (Emmett's idea, ordered differently):
 *  - every event records the writing transaction id (`xid8`, `pg_current_xact_id()`, 64-bit and
 *    never wrapping);
 *  - the global order is (transaction_id, position): whole transactions in xid order, events of
 *    one transaction in sequence order;
 *  - readers only see rows whose transaction_id is below `pg_snapshot_xmin(pg_current_snapshot())`,
 *    the oldest transaction still running anywhere on the server. Every transaction below it has
 *    ended (committed rows are visible, aborted ones left none), and every transaction that writes
 *    later gets an xid >= that xmin, so it sorts after everything already delivered. The visible
 *    prefix of the order only ever grows at its end.
 * The cost: a long-running writing transaction (in any database of the server) delays delivery of
 * everything after it until it ends. It never causes a skip.
 *
 * The port wants one bigint. Both halves are full 64-bit values, so they are packed without loss
 * as `transaction_id << 64 | position`, the same shape as the KurrentDB adapter's commit/prepare
 * pair. Checkpoints must therefore be stored as numeric(39) or text, never int8.
 */

const positionBits = 64n;
const positionMask = (1n << positionBits) - 1n;

export interface GlobalOrderKey {
  transactionId: bigint;
  position: bigint;
}

export function encodeGlobalPosition(key: GlobalOrderKey): bigint {
  return (key.transactionId << positionBits) | key.position;
}

export function decodeGlobalPosition(encoded: bigint): GlobalOrderKey {
  if (encoded < 0n) throw new RangeError(`position must not be negative, got ${encoded}`);
  return { transactionId: encoded >> positionBits, position: encoded & positionMask };
}
