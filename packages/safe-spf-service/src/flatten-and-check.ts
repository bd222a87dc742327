import {
  checkEquivalence,
  type FlattenResult,
  flattenSpf,
  SpfFlattenError,
  type SpfResolver,
} from "@dmarc-ledger/safe-spf";

export type FlattenOutcome = { result: FlattenResult } | { code: string; message: string };

/**
 * Flattens an original and refuses a published set that is not equivalent to it: the one step
 * the first computation and every refresh share. Never throws for what DNS or the record did.
 * `needsCheck` lets a refresh skip the equivalence check for a result identical to the record
 * already published (checked when it was first computed): the check probes each record with
 * some 300 evaluations, which thousands of unchanged domains every few minutes cannot afford.
 */
export async function flattenAndCheck(
  domain: string,
  original: string,
  resolver: SpfResolver,
  publishZone: string | undefined,
  needsCheck: (result: FlattenResult) => boolean = () => true,
): Promise<FlattenOutcome> {
  try {
    const result = await flattenSpf({
      domain,
      record: original,
      resolver,
      ...(publishZone ? { publishZone } : {}),
    });
    if (!needsCheck(result)) return { result };
    // "Flattening that provably changes nothing": a published set that answers any address
    // differently from the original is never published.
    const equivalence = await checkEquivalence({ domain, result, resolver });
    if (equivalence.differences.length > 0) {
      const first = equivalence.differences[0]!;
      return {
        code: "not_equivalent",
        message: `The flattened record would answer ${first.published} for ${first.ip} where the original answers ${first.original}; ${equivalence.differences.length} addresses differ.`,
      };
    }
    return { result };
  } catch (error) {
    if (error instanceof SpfFlattenError) return { code: error.code, message: error.message };
    return { code: "internal_error", message: error instanceof Error ? error.message : String(error) };
  }
}
