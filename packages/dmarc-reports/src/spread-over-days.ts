const DAY = 86_400;

/**
 * Splits `count` messages of a report covering [begin, end) over UTC calendar days in proportion to the
 * seconds in each day, with the largest remainder method so the parts add up to `count` exactly.
 * Ties in the remainder go to the earlier day, so the result is deterministic.
 * Reports of at most 24 h (or with a broken range) keep their own begin.
 */
export function spreadOverDays(begin: number, end: number, count: number): { t: number; count: number }[] {
  const total = end - begin;
  if (!(total > DAY) || !Number.isFinite(total)) return [{ t: begin, count }];
  const parts: { t: number; seconds: number; count: number; remainder: number }[] = [];
  for (let dayStart = Math.floor(begin / DAY) * DAY; dayStart < end; dayStart += DAY) {
    const from = Math.max(begin, dayStart);
    const seconds = Math.min(end, dayStart + DAY) - from;
    // BigInt: count × seconds can pass 2^53 for huge counts over long ranges.
    const share = BigInt(count) * BigInt(seconds);
    parts.push({
      t: from,
      seconds,
      count: Number(share / BigInt(total)),
      remainder: Number(share % BigInt(total)),
    });
  }
  let missing = count - parts.reduce((sum, part) => sum + part.count, 0);
  const byRemainder = parts
    .map((part, index) => ({ part, index }))
    .sort((a, b) => b.part.remainder - a.part.remainder || a.index - b.index);
  for (const { part } of byRemainder) {
    if (missing <= 0) break;
    part.count++;
    missing--;
  }
  const nonEmpty = parts.filter((part) => part.count > 0).map(({ t, count }) => ({ t, count }));
  return nonEmpty.length > 0 ? nonEmpty : [{ t: begin, count }];
}
