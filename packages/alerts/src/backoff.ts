/**
 * The delay before attempt `attempts + 1`: doubling from `baseMs`, at most `maxMs`, with "equal
 * jitter" (between half and all of it), so that the deliveries that failed together (a receiver
 * down) do not all come back at the same instant.
 */
export function retryDelay(
  attempts: number,
  baseMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  const exponential = Math.min(maxMs, baseMs * 2 ** Math.min(40, Math.max(0, attempts - 1)));
  return Math.round(exponential / 2 + random() * (exponential / 2));
}
