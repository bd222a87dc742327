import { DnsLookupError, isSpfRecord, parseSpfRecord, type SpfResolver } from "@dmarc-ledger/safe-spf";

export interface SpfReach {
  /** The domain's own SPF record; null when it has none (or several). */
  record: string | null;
  /** How many SPF records the domain has (more than one is a permerror). */
  records: number;
  /** Whether an include or redirect, at any depth, names the Safe SPF root. */
  reachesRoot: boolean;
  /** How the root is reached from the closest record: "include", "redirect" or null. */
  via: "include" | "redirect" | null;
  /** DNS lookups an evaluation costs (RFC 7208 §4.6.4: include, a, mx, ptr, exists, redirect). */
  lookups: number;
  /** What could not be read or parsed on the way (each a sentence). */
  errors: string[];
}

/** Records read at most while walking includes: enough for any tree that stays below the limit. */
const maxRecords = 40;

/**
 * Walks a domain's SPF record through its includes and redirects, as a receiver evaluating it
 * would: counts the lookups the whole tree costs and looks for the Safe SPF root among the names
 * it reaches. A name with a macro cannot be followed without a message, so it counts one lookup.
 */
export async function walkSpf(resolver: SpfResolver, domain: string, root: string | null): Promise<SpfReach> {
  const reach: SpfReach = { record: null, records: 0, reachesRoot: false, via: null, lookups: 0, errors: [] };
  const target = root?.toLowerCase().replace(/\.$/, "") ?? null;
  let read = 0;

  const recordsAt = async (name: string): Promise<string[] | null> => {
    try {
      const answer = await resolver.lookup(name, "TXT");
      return answer.values.filter(isSpfRecord);
    } catch (error) {
      reach.errors.push(
        error instanceof DnsLookupError
          ? `the TXT records of ${name} could not be read (${error.code})`
          : String(error),
      );
      return null;
    }
  };

  const visit = async (name: string, stack: string[], top: boolean): Promise<void> => {
    if (stack.includes(name)) {
      reach.errors.push(`${name} includes itself (a loop receivers reject)`);
      return;
    }
    if (++read > maxRecords) return;
    const found = await recordsAt(name);
    if (found === null) return;
    if (top) {
      reach.records = found.length;
      reach.record = found.length === 1 ? found[0]! : null;
    }
    if (found.length !== 1) {
      if (!top) reach.errors.push(`${name} has ${found.length === 0 ? "no" : "several"} SPF records`);
      return;
    }
    let record: ReturnType<typeof parseSpfRecord>;
    try {
      record = parseSpfRecord(found[0]!);
    } catch (error) {
      reach.errors.push(`the SPF record of ${name} does not parse: ${(error as Error).message}`);
      return;
    }
    const follow: { next: string; via: "include" | "redirect" }[] = [];
    for (const mechanism of record.mechanisms) {
      if (!["include", "a", "mx", "ptr", "exists"].includes(mechanism.kind)) continue;
      reach.lookups++;
      if (mechanism.kind === "include" && mechanism.domainSpec && !mechanism.domainSpec.includes("%")) {
        follow.push({ next: mechanism.domainSpec.toLowerCase().replace(/\.$/, ""), via: "include" });
      }
    }
    // A redirect is ignored when the record has an "all" (RFC 7208 §6.1).
    if (record.redirect && !record.mechanisms.some((mechanism) => mechanism.kind === "all")) {
      reach.lookups++;
      if (!record.redirect.value.includes("%")) {
        follow.push({ next: record.redirect.value.toLowerCase().replace(/\.$/, ""), via: "redirect" });
      }
    }
    for (const { next, via } of follow) {
      if (next === target && !reach.reachesRoot) {
        reach.reachesRoot = true;
        reach.via = via;
      }
      await visit(next, [...stack, name], false);
    }
  };

  await visit(domain.toLowerCase(), [], true);
  return reach;
}
