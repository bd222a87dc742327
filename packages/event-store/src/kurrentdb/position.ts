import type { Position } from "@kurrent/kurrentdb-client";

/**
 * KurrentDB positions are a (commit, prepare) pair of unsigned 64-bit log offsets, ordered by
 * commit then prepare. Packed without loss into one ordered bigint: commit << 64 | prepare.
 */
const prepareBits = 64n;
const prepareMask = (1n << prepareBits) - 1n;

export function packPosition(position: Position): bigint {
  return (position.commit << prepareBits) | position.prepare;
}

export function unpackPosition(packed: bigint): Position {
  if (packed < 0n) throw new RangeError(`position must not be negative, got ${packed}`);
  return { commit: packed >> prepareBits, prepare: packed & prepareMask };
}
