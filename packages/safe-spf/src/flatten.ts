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

/** What a record means, in order: address ranges with a qualifier, or terms kept as they are. */
type FlatItem =
  | { kind: "networks"; qualifier: Qualifier; set: IpSet }
  | { kind: "verbatim"; qualifier: Qualifier; term: string; lookups: number };

interface FlatPolicy {
  items: FlatItem[];
  /** Qualifier of the terminating `all`; null when the record ends without one (neutral). */
  fallthrough: Qualifier | null;
  /** DNS lookups the original costs a receiver (RFC 7208 §4.6.4 count over the whole tree). */
  lookups: number;
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
        { kind: "verbatim", term: item.term, lookups: item.lookups },
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
    const policy: FlatPolicy = {
      items: terms.flatMap((term) => term.items),
      fallthrough: allIndex === -1 ? null : record.mechanisms[allIndex]!.qualifier,
      lookups: terms.reduce((sum, term) => sum + term.lookups, 0),
      ...(record.exp ? { exp: substituteDomainMacros(record.exp.value, domain) } : {}),
    };
    if (redirected) {
      policy.items.push(...redirected.items);
      policy.fallthrough = redirected.fallthrough;
      policy.lookups += 1 + redirected.lookups;
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

  verbatim(mechanism: SpfMechanism, domain: string, lookups: number, why: string) {
    const spec =
      mechanism.domainSpec === undefined ? domain : substituteDomainMacros(mechanism.domainSpec, domain);
    const term = formatMechanism(mechanism, spec);
    this.warnings.push(`kept verbatim: ${term} (${why})`);
    return {
      items: [{ kind: "verbatim", qualifier: mechanism.qualifier, term, lookups }] as FlatItem[],
      lookups,
    };
  }

  async itemsOf(
    mechanism: SpfMechanism,
    domain: string,
    path: string[],
  ): Promise<{ items: FlatItem[]; lookups: number }> {
    const networks = (set: IpSet, lookups: number) => ({
      items: [{ kind: "networks", qualifier: mechanism.qualifier, set }] as FlatItem[],
      lookups,
    });
    if (mechanism.kind === "ip4" || mechanism.kind === "ip6") {
      const family = mechanism.kind === "ip4" ? 4 : 6;
      const value = parseNetworkAddress(mechanism.address!, family)!;
      return networks(
        IpSet.of([prefixRange(family, value, family === 4 ? mechanism.cidr4 : mechanism.cidr6)]),
        0,
      );
    }
    if (mechanism.kind === "ptr")
      return this.verbatim(mechanism, domain, 1, "ptr depends on the client's reverse DNS");
    if (mechanism.kind === "exists")
      return this.verbatim(mechanism, domain, 1, "exists depends on the sender");
    const spec =
      mechanism.domainSpec === undefined ? domain : substituteDomainMacros(mechanism.domainSpec, domain);
    if (hasMacros(spec)) return this.verbatim(mechanism, domain, 1, "macros depend on the sender");
    const target = toQueryName(spec)?.toLowerCase();
    if (!target) return networks(new IpSet(), 1);
    if (mechanism.kind === "include") {
      const outcome = await this.policyFor(target, path);
      if ("unusable" in outcome) return this.verbatim(mechanism, domain, 1, outcome.unusable);
      const { policy } = outcome;
      if (policy.items.some((item) => item.kind === "verbatim")) {
        return this.verbatim(
          mechanism,
          domain,
          1 + policy.lookups,
          "the included record keeps terms verbatim",
        );
      }
      return networks(passSet(regionsOf(policy.items), policy.fallthrough), 1 + policy.lookups);
    }
    if (mechanism.kind === "a") return networks(await this.addressesOf(target, mechanism), 1);
    const exchanges = (await this.lookup(target, "MX")).values.filter((exchange) => exchange !== "");
    if (exchanges.length > NAME_LIMIT) {
      return this.verbatim(
        mechanism,
        domain,
        1,
        `more than ${NAME_LIMIT} MX records: receivers give permerror`,
      );
    }
    const sets = await Promise.all(exchanges.map((exchange) => this.addressesOf(exchange, mechanism)));
    const set = new IpSet();
    for (const each of sets) set.addSet(each);
    return networks(set, 1);
  }

  async addressesOf(name: string, mechanism: SpfMechanism): Promise<IpSet> {
    const [v4, v6] = await Promise.all([this.lookup(name, "A"), this.lookup(name, "AAAA")]);
    const ranges = [
      ...v4.values.map((address) => prefixRange(4, parseNetworkAddress(address, 4)!, mechanism.cidr4)),
      ...v6.values.map((address) => prefixRange(6, parseNetworkAddress(address, 6)!, mechanism.cidr6)),
    ];
    return IpSet.of(ranges);
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
  const regions = regionsOf(policy.items);
  const { segments } = regions;
  const published = publishTerms({
    segments,
    fallthrough: policy.fallthrough,
    exp: policy.exp,
    rootName: input.publishZone ? `${domain}.${input.publishZone.replace(/\.$/, "")}` : domain,
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
