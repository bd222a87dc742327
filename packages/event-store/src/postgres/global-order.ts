/**
 * The global order of the PostgreSQL adapter, and why no subscriber skips a late commit.
 *
 * The trap: sequence values are taken when a row is inserted, not when its transaction commits.
 * Transaction A takes position 5, B takes 6 and commits first; a reader that saw 6 and moved its
 * checkpoint past it would never see 5.
 *
 * Emmett's answer is to read only transactions below the snapshot's xmin, the oldest transaction
 * still running. Its cost showed here: that xmin is server-wide, so any long transaction — a
 * projector's batch, a report import, another application's session in another database — holds
 * back every subscriber until it ends. Marten's high-water mark waits out gaps with a timeout,
 * which can skip an event that is merely slow.
 *
 * Our guard: appends are serialised. Every append transaction takes one transaction-level
 * advisory lock before it has a transaction id, and gets its id and its sequence values while
 * holding it (append.ts). So each append's (transaction_id, position) values are larger than those
 * of every append that committed before it, and no append can commit "behind" what a reader has
 * already seen. Readers need no filter at all: what they see of the order (transaction_id, position)
 * only ever grows at its end, and unrelated transactions delay nothing.
 * The cost: one append transaction at a time (about a millisecond each on a local server; an
 * append carries up to 2,000 report rows, so intake stays far above need).
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
