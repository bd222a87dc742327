import { NAME_LIMIT } from "./check-host.js";
import { SpfFlattenError } from "./flatten-error.js";
import { IpSet, maxAddress, parseNetworkAddress, prefixRange } from "./ip-networks.js";
import { hasMacros, substituteDomainMacros, toQueryName } from "./macro.js";
import { type PublishedRecord, publishTerms, type RegionSegment } from "./publish.js";
import {
  formatMechanism,
  isSpfRecord,
  parseSpfRecord,
  type Qualifier,
  type SpfMechanism,
  SpfSyntaxError,
} from "./record-parser.js";
import { type DnsAnswer, DnsLookupError, type DnsRecordType, type SpfResolver } from "./resolver.js";

export interface FlattenInput {
  domain: string;
  /** The original record; when absent, the domain's TXT record is read. */
  record?: string;
  resolver: SpfResolver;
  /** Zone our DNS server publishes under; without it the records are named under the domain itself. */
  publishZone?: string;
}

export interface FlattenResult {
  domain: string;
  original: string;
  /** The published set: root record first, then chained records. */
  records: PublishedRecord[];
  lookupsBefore: number;
  lookupsAfter: number;
  sizes: { name: string; bytes: number }[];
  /** CIDRs the published set passes (for diffs). */
  networks: string[];
  keptVerbatim: string[];
  warnings: string[];
  /** Smallest TTL seen, for re-resolution scheduling. */
  minTtl: number | null;
}

/** Void lookups a term costs whatever the client, per address family of the client. */
export interface VoidCount {
  4: number;
  6: number;
}

const noVoids = (): VoidCount => ({ 4: 0, 6: 0 });
const addVoids = (a: VoidCount, b: VoidCount): VoidCount => ({ 4: a[4] + b[4], 6: a[6] + b[6] });

/**
 * What a record means, in order: address ranges with a qualifier, or terms kept as they are. A
 * verbatim term's `lookups` and `voids` are what the strictest receivers count for it (its whole
 * tree for an include); `movesMeaning` says why it cannot be published under another name.
 */
type FlatItem =
  | { kind: "networks"; qualifier: Qualifier; set: IpSet }
  | {
      kind: "verbatim";
      qualifier: Qualifier;
      term: string;
      lookups: number;
      voids: VoidCount;
      movesMeaning: string | null;
    };

/** A term's items and what evaluating it costs: RFC lookups, strict lookups and void lookups. */
interface TermItems {
  items: FlatItem[];
  lookups: number;
  strictLookups: number;
  voids: VoidCount;
}

interface FlatPolicy {
  items: FlatItem[];
  /** Qualifier of the terminating `all`; null when the record ends without one (neutral). */
  fallthrough: Qualifier | null;
  /** DNS lookups the original costs a receiver (RFC 7208 §4.6.4 count over the whole tree). */
  lookups: number;
  /** The same, counted like the strictest receivers: a redirect= beside all costs one too. */
  strictLookups: number;
  /** Void lookups the whole tree may cost, MX exchanges' empty address answers included. */
  voids: VoidCount;
  exp?: string;
}

type PolicyOutcome = { policy: FlatPolicy } | { unusable: string };

const everything = () =>
  IpSet.of([
    { family: 4, start: 0n, end: maxAddress(4) },
    { family: 6, start: 0n, end: maxAddress(6) },
  ]);

/** First-match semantics: the addresses each qualifier ends up deciding, in order of items. */
function regionsOf(items: FlatItem[]): { segments: RegionSegment[]; covered: IpSet } {
  const covered = new IpSet();
  const segments: RegionSegment[] = [];
  let regions = new Map<Qualifier, IpSet>();
  let decidedBefore = new IpSet();
  for (const item of items) {
    if (item.kind === "verbatim") {
      segments.push(
        { kind: "regions", regions, decidedBefore },
        { kind: "verbatim", term: item.term, lookups: item.lookups, voids: item.voids },
      );
      regions = new Map();
      decidedBefore = covered.clone();
      continue;
    }
    const region = regions.get(item.qualifier) ?? new IpSet();
    region.addSet(item.set.minus(covered));
    regions.set(item.qualifier, region);
    covered.addSet(item.set);
  }
  segments.push({ kind: "regions", regions, decidedBefore });
  return { segments, covered };
}

/**
 * Addresses the address terms and the closing `all` give pass; for a policy without verbatim terms,
 * exactly what `include:` of it matches.
 */
function passSet({ segments, covered }: ReturnType<typeof regionsOf>, fallthrough: Qualifier | null): IpSet {
  const pass = new IpSet();
  for (const segment of segments)
    if (segment.kind === "regions") pass.addSet(segment.regions.get("+") ?? new IpSet());
  if (fallthrough === "+") pass.addSet(everything().minus(covered));
  return pass;
}

class Flattener {
  readonly warnings: string[] = [];
  minTtl: number | null = null;

  constructor(private readonly resolver: SpfResolver) {}

  async lookup(name: string, type: DnsRecordType): Promise<DnsAnswer> {
    try {
      const answer = await this.resolver.lookup(name, type);
      this.minTtl = this.minTtl === null ? answer.ttl : Math.min(this.minTtl, answer.ttl);
      return answer;
    } catch (error) {
      if (error instanceof DnsLookupError) {
        const code = error.code === "timeout" ? "dns_timeout" : "unflattenable";
        throw new SpfFlattenError(code, error.message);
      }
      throw error;
    }
  }

  /** The domain's SPF records (one, unless it is broken). */
  async recordsOf(domain: string): Promise<string[]> {
    return (await this.lookup(domain, "TXT")).values.filter(isSpfRecord);
  }

  async policyFor(domain: string, path: string[]): Promise<PolicyOutcome> {
    if (path.includes(domain)) {
      throw new SpfFlattenError("loop", `include/redirect loop: ${[...path, domain].join(" → ")}`);
    }
    const texts = await this.recordsOf(domain);
    if (texts.length !== 1) return { unusable: `${domain} has ${texts.length} SPF records` };
    try {
      return { policy: await this.policyOf(domain, texts[0]!, [...path, domain]) };
    } catch (error) {
      if (error instanceof SpfSyntaxError) return { unusable: `${domain}: ${error.message}` };
      throw error;
    }
  }

  async policyOf(domain: string, text: string, path: string[]): Promise<FlatPolicy> {
    const record = parseSpfRecord(text);
    const allIndex = record.mechanisms.findIndex((mechanism) => mechanism.kind === "all");
    const reached = allIndex === -1 ? record.mechanisms : record.mechanisms.slice(0, allIndex);
    const redirect = allIndex === -1 ? record.redirect : undefined;
    const [terms, redirected] = await Promise.all([
      Promise.all(reached.map((mechanism) => this.itemsOf(mechanism, domain, path))),
      redirect ? this.redirectPolicy(substituteDomainMacros(redirect.value, domain), path) : undefined,
    ]);
    // Strict receivers count a redirect= that `all` makes unreachable; they do not follow it.
    const unreachableRedirect = allIndex !== -1 && record.redirect !== undefined ? 1 : 0;
    const policy: FlatPolicy = {
      items: terms.flatMap((term) => term.items),
      fallthrough: allIndex === -1 ? null : record.mechanisms[allIndex]!.qualifier,
      lookups: terms.reduce((sum, term) => sum + term.lookups, 0),
      strictLookups: terms.reduce((sum, term) => sum + term.strictLookups, unreachableRedirect),
      voids: terms.reduce((sum, term) => addVoids(sum, term.voids), noVoids()),
      ...(record.exp ? { exp: substituteDomainMacros(record.exp.value, domain) } : {}),
    };
    if (redirected) {
      policy.items.push(...redirected.items);
      policy.fallthrough = redirected.fallthrough;
      policy.lookups += 1 + redirected.lookups;
      policy.strictLookups += 1 + redirected.strictLookups;
      policy.voids = addVoids(policy.voids, redirected.voids);
      if (redirected.exp && redirected.exp !== policy.exp) {
        this.warnings.push(
          `exp=${redirected.exp} of the redirect target is replaced by the root's explanation`,
        );
      }
    }
    return policy;
  }

  async redirectPolicy(spec: string, path: string[]): Promise<FlatPolicy> {
    const target = hasMacros(spec) ? null : toQueryName(spec);
    if (!target) throw new SpfFlattenError("unflattenable", `redirect=${spec} depends on the sender`);
    const outcome = await this.policyFor(target.toLowerCase(), path);
    if ("unusable" in outcome) {
      throw new SpfFlattenError("unflattenable", `redirect target unusable: ${outcome.unusable}`);
    }
    return outcome.policy;
  }

  /**
   * A term kept as it is. `cost` is what its own evaluation costs (an include's whole tree); a term
   * with %{p} is marked, because %{p} prefers a name under the domain being evaluated, and that
   * domain changes when the term is published under our root.
   */
  verbatim(
    mechanism: SpfMechanism,
    domain: string,
    cost: { lookups: number; strictLookups: number; voids: VoidCount },
    why: string,
  ): TermItems {
    const spec =
      mechanism.domainSpec === undefined ? domain : substituteDomainMacros(mechanism.domainSpec, domain);
    const term = formatMechanism(mechanism, spec);
    this.warnings.push(`kept verbatim: ${term} (${why})`);
    const movesMeaning = /%\{p/i.test(spec)
      ? `${term} uses %{p}, which prefers a name under the domain being evaluated: published under another name it would mean something else`
      : null;
    return {
      items: [
        {
          kind: "verbatim",
          qualifier: mechanism.qualifier,
          term,
          lookups: cost.strictLookups,
          voids: cost.voids,
          movesMeaning,
        },
      ],
      lookups: cost.lookups,
      strictLookups: cost.strictLookups,
      voids: cost.voids,
    };
  }

  async itemsOf(mechanism: SpfMechanism, domain: string, path: string[]): Promise<TermItems> {
    const networks = (set: IpSet, lookups: number, voids = noVoids(), strictLookups = lookups) => ({
      items: [{ kind: "networks", qualifier: mechanism.qualifier, set }] as FlatItem[],
      lookups,
      strictLookups,
      voids,
    });
    const oneLookup = { lookups: 1, strictLookups: 1, voids: noVoids() };
    if (mechanism.kind === "ip4" || mechanism.kind === "ip6") {
      const family = mechanism.kind === "ip4" ? 4 : 6;
      const value = parseNetworkAddress(mechanism.address!, family)!;
      return networks(
        IpSet.of([prefixRange(family, value, family === 4 ? mechanism.cidr4 : mechanism.cidr6)]),
        0,
      );
    }
    if (mechanism.kind === "ptr")
      return this.verbatim(mechanism, domain, oneLookup, "ptr depends on the client's reverse DNS");
    if (mechanism.kind === "exists")
      return this.verbatim(mechanism, domain, oneLookup, "exists depends on the sender");
    const spec =
      mechanism.domainSpec === undefined ? domain : substituteDomainMacros(mechanism.domainSpec, domain);
    if (hasMacros(spec)) return this.verbatim(mechanism, domain, oneLookup, "macros depend on the sender");
    const target = toQueryName(spec)?.toLowerCase();
    if (!target) return networks(new IpSet(), 1);
    if (mechanism.kind === "include") {
      const outcome = await this.policyFor(target, path);
      if ("unusable" in outcome) return this.verbatim(mechanism, domain, oneLookup, outcome.unusable);
      const { policy } = outcome;
      const cost = {
        lookups: 1 + policy.lookups,
        strictLookups: 1 + policy.strictLookups,
        voids: policy.voids,
      };
      if (policy.items.some((item) => item.kind === "verbatim")) {
        return this.verbatim(mechanism, domain, cost, "the included record keeps terms verbatim");
      }
      const set = passSet(regionsOf(policy.items), policy.fallthrough);
      return networks(set, cost.lookups, cost.voids, cost.strictLookups);
    }
    if (mechanism.kind === "a") {
      const { set, voids } = await this.addressesOf(target, mechanism);
      return networks(set, 1, voids);
    }
    const answer = await this.lookup(target, "MX");
    const exchanges = answer.values.filter((exchange) => exchange !== "");
    if (exchanges.length > NAME_LIMIT) {
      return this.verbatim(
        mechanism,
        domain,
        oneLookup,
        `more than ${NAME_LIMIT} MX records: receivers give permerror`,
      );
    }
    const found = await Promise.all(exchanges.map((exchange) => this.addressesOf(exchange, mechanism)));
    const set = new IpSet();
    // An empty MX answer is a void lookup; strict receivers also count each exchange's empty answer.
    let voids: VoidCount = answer.values.length === 0 ? { 4: 1, 6: 1 } : noVoids();
    for (const each of found) {
      set.addSet(each.set);
      voids = addVoids(voids, each.voids);
    }
    return networks(set, 1, voids);
  }

  /** A name's addresses, and per family whether the answer was empty (a void lookup). */
  async addressesOf(name: string, mechanism: SpfMechanism): Promise<{ set: IpSet; voids: VoidCount }> {
    const [v4, v6] = await Promise.all([this.lookup(name, "A"), this.lookup(name, "AAAA")]);
    const ranges = [
      ...v4.values.map((address) => prefixRange(4, parseNetworkAddress(address, 4)!, mechanism.cidr4)),
      ...v6.values.map((address) => prefixRange(6, parseNetworkAddress(address, 6)!, mechanism.cidr6)),
    ];
    return {
      set: IpSet.of(ranges),
      voids: { 4: v4.values.length === 0 ? 1 : 0, 6: v6.values.length === 0 ? 1 : 0 },
    };
  }
}

/**
 * Resolves a domain's SPF record into the set of records we publish: includes, redirects, a and mx
 * become ip4/ip6 networks, terms whose meaning depends on the sender stay as they are, and the result
 * gives every client the verdict the original gives.
 */
export async function flattenSpf(input: FlattenInput): Promise<FlattenResult> {
  const domain = input.domain.toLowerCase().replace(/\.$/, "");
  const flattener = new Flattener(input.resolver);
  const found = input.record === undefined ? await flattener.recordsOf(domain) : [input.record];
  if (found.length === 0) throw new SpfFlattenError("no_spf_record", `${domain} has no SPF record`);
  if (found.length > 1) throw new SpfFlattenError("syntax", `${domain} has ${found.length} SPF records`);
  const original = found[0]!;
  let policy: FlatPolicy;
  try {
    policy = await flattener.policyOf(domain, original, [domain]);
  } catch (error) {
    if (error instanceof SpfSyntaxError) throw new SpfFlattenError("syntax", error.message);
    throw error;
  }
  const moved = policy.items.find((item) => item.kind === "verbatim" && item.movesMeaning !== null);
  if (moved?.kind === "verbatim") throw new SpfFlattenError("unflattenable", moved.movesMeaning!);
  const regions = regionsOf(policy.items);
  const { segments } = regions;
  const published = publishTerms({
    segments,
    fallthrough: policy.fallthrough,
    exp: policy.exp,
    rootName: input.publishZone ? `${domain}.${input.publishZone.replace(/\.$/, "")}` : domain,
    // Under our zone the customer's record reaches the set through redirect= or include:, which
    // is itself a lookup that the set's budget must leave room for.
    pointerLookups: input.publishZone ? 1 : 0,
  });
  return {
    domain,
    original,
    records: published.records,
    lookupsBefore: policy.lookups,
    lookupsAfter: published.lookups,
    sizes: published.records.map((record) => ({ name: record.name, bytes: record.bytes })),
    networks: passSet(regions, policy.fallthrough).toCidrs(),
    keptVerbatim: segments.flatMap((segment) => (segment.kind === "verbatim" ? [segment.term] : [])),
    warnings: flattener.warnings,
    minTtl: flattener.minTtl,
  };
}
