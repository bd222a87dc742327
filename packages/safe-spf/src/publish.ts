import { createHash } from "node:crypto";
import { LOOKUP_LIMIT, VOID_LOOKUP_LIMIT } from "./check-host.js";
import { SpfFlattenError } from "./flatten-error.js";
import { IpSet, parseCidr } from "./ip-networks.js";
import { formatQualifier, type Qualifier } from "./record-parser.js";

export type RegionSegment =
  /** Disjoint address sets per qualifier; `decidedBefore` holds addresses earlier terms already decide. */
  | { kind: "regions"; regions: Map<Qualifier, IpSet>; decidedBefore: IpSet }
  /** `voids`: void lookups the term costs whatever the client, per client address family. */
  | { kind: "verbatim"; term: string; lookups: number; voids: { 4: number; 6: number } };

export interface PublishedRecord {
  name: string;
  value: string;
  /** The TXT character-strings to publish, each ≤ 255 bytes (joined, they are `value`). */
  strings: string[];
  /** RDATA size on the wire. */
  bytes: number;
}

export const MAX_TXT_STRING_BYTES = 255;
/** A UDP answer larger than this is truncated for a resolver that does not offer EDNS(0). */
export const UDP_MESSAGE_BYTES = 512;

/**
 * The largest RDATA whose answer, for a TXT question on `name`, fits a 512-byte UDP message:
 * header (12), question (name + type + class), the answer's owner (a 2-byte pointer to the
 * question's name), type, class, TTL and RDLENGTH (10), and an EDNS(0) OPT record (11), which a
 * server adds when the question carried one.
 */
export function maxRecordBytes(name: string): number {
  const nameWire = Buffer.byteLength(name.replace(/\.$/, "")) + 2;
  return UDP_MESSAGE_BYTES - 12 - (nameWire + 4) - (2 + 10) - 11;
}

/** Splits a record into character-strings of at most 255 bytes, preferring to cut after a space. */
export function toTxtStrings(value: string): string[] {
  const strings: string[] = [];
  let rest = value;
  while (Buffer.byteLength(rest) > MAX_TXT_STRING_BYTES) {
    let cut = MAX_TXT_STRING_BYTES;
    const space = rest.lastIndexOf(" ", MAX_TXT_STRING_BYTES - 1);
    if (space > 0) cut = space + 1;
    strings.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  strings.push(rest);
  return strings;
}

export function recordBytes(value: string): number {
  return toTxtStrings(value).reduce((sum, text) => sum + 1 + Buffer.byteLength(text), 0);
}

/**
 * `_spf1-<version>.<root>`, `_spf2-<version>.<root>`, …: the chained records of a published set.
 * The version names the set's content, so a new set never reuses an old set's chained names: a
 * resolver that read the old root and then asks for a chained record gets the old set's, which
 * the DNS server keeps while old roots may still be cached.
 */
export function chainedRecordName(rootName: string, index: number, version: string): string {
  return `_spf${index}-${version}.${rootName}`;
}

/** 8 hex digits of SHA-256 over the terms a set publishes: equal sets, equal names. */
export function publishedSetVersion(terms: readonly string[], suffix: string): string {
  return createHash("sha256")
    .update(`${terms.join(" ")}\n${suffix}`)
    .digest("hex")
    .slice(0, 8);
}

function permutations<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((item, index) =>
    permutations([...items.slice(0, index), ...items.slice(index + 1)]).map((rest) => [item, ...rest]),
  );
}

/**
 * The fewest terms that give each region its qualifier. Terms are matched in order, so a term may also
 * cover addresses that earlier terms already decided: `-ip4:10.0.0.1 ip4:10.0.0.0/8` instead of the
 * 24 blocks of the /8 without that address. Tries every order of the qualifiers (at most 24), and
 * with the closing `all`'s own qualifier either spelled out or left to the `all`.
 */
function regionTerms(
  segment: Extract<RegionSegment, { kind: "regions" }>,
  leftToAll: Qualifier | null,
): string[] {
  const present = [...segment.regions.keys()].filter(
    (qualifier) => !segment.regions.get(qualifier)!.isEmpty(),
  );
  const orders = permutations(present);
  if (leftToAll && present.includes(leftToAll)) {
    orders.push(...permutations(present.filter((qualifier) => qualifier !== leftToAll)));
  }
  let best: string[] | null = null;
  for (const order of orders) {
    const decided = segment.decidedBefore.clone();
    const terms: string[] = [];
    for (const qualifier of order) {
      const region = segment.regions.get(qualifier)!;
      const exact = region.toCidrs();
      const widened = decided.isEmpty()
        ? exact
        : IpSet.of([...region.all(), ...decided.all()])
            .toCidrs()
            .filter((cidr) => region.overlaps(parseCidr(cidr)));
      for (const cidr of widened.length < exact.length ? widened : exact)
        terms.push(networkTerm(qualifier, cidr));
      decided.addSet(region);
    }
    if (!best || terms.length < best.length) best = terms;
  }
  return best ?? [];
}

function networkTerm(qualifier: Qualifier, cidr: string): string {
  const v6 = cidr.includes(":");
  const short = cidr.replace(v6 ? /\/128$/ : /\/32$/, "");
  return `${formatQualifier(qualifier)}${v6 ? "ip6" : "ip4"}:${short}`;
}

/**
 * Lays the flattened policy out as terms and packs them into a root record and chained records.
 * Records are chained with redirect= (which carries every result, unlike include:), the last one
 * ends with the original's `all`.
 */
export function publishTerms(input: {
  segments: RegionSegment[];
  fallthrough: Qualifier | null;
  exp?: string;
  rootName: string;
  /** Lookups spent before the set is reached: 1 for the customer's redirect= or include: to it. */
  pointerLookups?: number;
}): { records: PublishedRecord[]; lookups: number } {
  const terms: string[] = [];
  let verbatimLookups = 0;
  const voids = { 4: 0, 6: 0 };
  const last = input.segments.length - 1;
  input.segments.forEach((segment, index) => {
    if (segment.kind === "verbatim") {
      terms.push(segment.term);
      verbatimLookups += segment.lookups;
      voids[4] += segment.voids[4];
      voids[6] += segment.voids[6];
      return;
    }
    // After the last verbatim term, addresses the closing `all` decides the same way need no term.
    terms.push(...regionTerms(segment, index === last ? (input.fallthrough ?? "?") : null));
  });
  if (input.fallthrough !== null) terms.push(`${formatQualifier(input.fallthrough)}all`);

  const suffix = input.exp ? ` exp=${input.exp}` : "";
  const version = publishedSetVersion(terms, suffix);
  const nameOf = (index: number) =>
    index === 0 ? input.rootName : chainedRecordName(input.rootName, index, version);
  const values: string[] = [];
  let next = 0;
  while (next < terms.length || values.length === 0) {
    const name = nameOf(values.length);
    const limit = maxRecordBytes(name);
    const rest = `v=spf1${terms
      .slice(next)
      .map((term) => ` ${term}`)
      .join("")}${suffix}`;
    if (recordBytes(rest) <= limit) {
      values.push(rest);
      break;
    }
    const redirect = ` redirect=${nameOf(values.length + 1)}`;
    let value = "v=spf1";
    const start = next;
    while (next < terms.length && recordBytes(`${value} ${terms[next]}${redirect}${suffix}`) <= limit) {
      value += ` ${terms[next]}`;
      next++;
    }
    if (next === start) {
      throw new SpfFlattenError(
        "record_too_large",
        `term "${terms[next]}" does not fit a record for ${name}`,
      );
    }
    values.push(`${value}${redirect}${suffix}`);
  }
  const lookups = values.length - 1 + verbatimLookups;
  const pointer = input.pointerLookups ?? 0;
  if (lookups + pointer > LOOKUP_LIMIT) {
    throw new SpfFlattenError(
      "lookup_limit",
      `published set needs ${lookups} DNS lookups (${values.length} records, ${verbatimLookups} for terms kept verbatim)${pointer ? `, plus ${pointer} for the customer's record pointing at it` : ""}; the limit is ${LOOKUP_LIMIT}`,
    );
  }
  const worstVoids = Math.max(voids[4], voids[6]);
  if (worstVoids > VOID_LOOKUP_LIMIT) {
    throw new SpfFlattenError(
      "lookup_limit",
      `terms kept verbatim cost ${worstVoids} void lookups for every client of one address family (empty answers, MX exchanges' included, as strict receivers count them); the limit is ${VOID_LOOKUP_LIMIT}`,
    );
  }
  const records = values.map((value, index) => ({
    name: nameOf(index),
    value,
    strings: toTxtStrings(value),
    bytes: recordBytes(value),
  }));
  return { records, lookups };
}
