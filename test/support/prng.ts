/**
 * A deterministic stream of pseudo-random numbers in [0, 1] (a linear congruential generator),
 * so that a test's generated reports, and a failing run, can be repeated.
 */
export function prng(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
}
