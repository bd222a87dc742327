import { checkHost, type SpfResult } from "./check-host.js";
import type { FlattenResult } from "./flatten.js";
import {
  formatAddress,
  type IpFamily,
  IpSet,
  maxAddress,
  parseCidr,
  parseNetworkAddress,
  prefixRange,
} from "./ip-networks.js";
import { hasMacros, substituteDomainMacros, toQueryName } from "./macro.js";
import { isSpfRecord, parseSpfRecord } from "./record-parser.js";
import { createOverlayResolver, type SpfResolver } from "./resolver.js";

export interface EquivalenceInput {
  domain: string;
  result: FlattenResult;
  resolver: SpfResolver;
  /** Defaults to postmaster@<domain>. */
  sender?: string;
  helo?: string;
  /** Random addresses per family on top of the boundaries; default 64. */
  randomSamples?: number;
  seed?: number;
}

export interface EquivalenceReport {
  /**
   * `published` is the verdict as deployed (the customer's record pointing at our root), under
   * the RFC's count of lookups; `strict` under the strictest receivers' count.
   */
  differences: { ip: string; original: SpfResult; published: SpfResult; strict: SpfResult }[];
  checked: number;
}

/**
 * Addresses of the customer's own hosts (the domain and its MX exchanges): their PTR names tend to
 * sit under the customer's domain, which is where %{p} and ptr behave differently when a term is
 * evaluated under another name.
 */
async function ownHostAddresses(domain: string, resolver: SpfResolver): Promise<IpSet> {
  const found = new IpSet();
  const hosts = [domain];
  try {
    hosts.push(...(await resolver.lookup(domain, "MX")).values.filter((host) => host !== ""));
  } catch {
    // Only probe addresses are lost; check_host reports DNS errors in the verdicts.
  }
  await Promise.all(
    hosts.flatMap((host) =>
      ([4, 6] as const).map(async (family) => {
        try {
          for (const address of (await resolver.lookup(host, family === 4 ? "A" : "AAAA")).values) {
            const value = parseNetworkAddress(address, family);
            if (value !== null) found.add(prefixRange(family, value, family === 4 ? 32 : 128));
          }
        } catch {
          // As above.
        }
      }),
    ),
  );
  return found;
}

/**
 * Every network a record tree names, found by walking it without interpreting qualifiers or order:
 * an independent source of the boundaries to probe, so a flattening bug cannot hide its own mistakes.
 */
async function networksNamedBy(domain: string, record: string, resolver: SpfResolver): Promise<IpSet> {
  const found = new IpSet();
  const visited = new Set<string>();
  const walk = async (current: string, text: string): Promise<void> => {
    let parsed: ReturnType<typeof parseSpfRecord>;
    try {
      parsed = parseSpfRecord(text);
    } catch {
      return;
    }
    const nameOf = (spec: string) => {
      const expanded = substituteDomainMacros(spec, current);
      return hasMacros(expanded) ? null : toQueryName(expanded);
    };
    const targets = parsed.mechanisms.map((mechanism) => ({
      mechanism,
      name: nameOf(mechanism.domainSpec ?? current),
    }));
    const followed = targets.filter(({ mechanism }) => mechanism.kind === "include").map(({ name }) => name);
    if (parsed.redirect) followed.push(nameOf(parsed.redirect.value));
    const follow = async (name: string | null) => {
      if (!name || visited.has(name)) return;
      visited.add(name);
      const next = (await resolver.lookup(name, "TXT")).values.filter(isSpfRecord);
      if (next.length === 1) await walk(name, next[0]!);
    };
    await Promise.all([
      ...followed.map((name) => follow(name).catch(() => undefined)),
      ...targets.map(async ({ mechanism, name }) => {
        try {
          if (mechanism.kind === "ip4" || mechanism.kind === "ip6") {
            const family: IpFamily = mechanism.kind === "ip4" ? 4 : 6;
            const value = parseNetworkAddress(mechanism.address!, family)!;
            found.add(prefixRange(family, value, family === 4 ? mechanism.cidr4 : mechanism.cidr6));
          } else if (name && (mechanism.kind === "a" || mechanism.kind === "mx")) {
            const hosts = mechanism.kind === "a" ? [name] : (await resolver.lookup(name, "MX")).values;
            for (const host of hosts) {
              for (const family of [4, 6] as const) {
                const answer = await resolver.lookup(host, family === 4 ? "A" : "AAAA");
                for (const address of answer.values) {
                  const value = parseNetworkAddress(address, family);
                  if (value !== null)
                    found.add(prefixRange(family, value, family === 4 ? mechanism.cidr4 : mechanism.cidr6));
                }
              }
            }
          }
        } catch {
          // DNS errors only cost probe addresses here; check_host reports them in the verdicts.
        }
      }),
    ]);
  };
  visited.add(domain);
  await walk(domain, record);
  return found;
}

function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomBelow(random: () => number, limit: bigint): bigint {
  let value = 0n;
  for (let bits = 0n; 1n << bits <= limit; bits += 32n)
    value = (value << 32n) | BigInt(Math.floor(random() * 2 ** 32));
  return value % (limit + 1n);
}

/**
 * Evaluates the original record and the published set with check_host() for the first and last
 * address of every network either names, the addresses just outside, one inside, and random ones,
 * and reports every address where the verdicts differ. The original is evaluated without the RFC
 * lookup limits (what it means, even when it breaks them); the published set with them.
 */
export async function checkEquivalence(input: EquivalenceInput): Promise<EquivalenceReport> {
  const { domain, result } = input;
  const sender = input.sender ?? `postmaster@${domain}`;
  const random = seededRandom(input.seed ?? 7208);
  const originalResolver = createOverlayResolver(input.resolver, [{ name: domain, value: result.original }]);
  // As deployed: under our zone the customer's record is a pointer to the root, and that pointer's
  // lookup counts against the limit too.
  const root = result.records[0]!.name;
  const deployed =
    root === domain
      ? result.records
      : [...result.records, { name: domain, value: `v=spf1 redirect=${root}` }];
  const publishedResolver = createOverlayResolver(input.resolver, deployed);

  const networks = await networksNamedBy(domain, result.original, input.resolver);
  networks.addSet(await ownHostAddresses(domain, input.resolver));
  for (const cidr of result.networks) networks.add(parseCidr(cidr));
  for (const record of result.records) {
    for (const match of record.value.matchAll(/ [+\-~?]?ip[46]:(\S+)/g)) {
      const cidr = match[1]!.includes("/") ? match[1]! : `${match[1]}/${match[1]!.includes(":") ? 128 : 32}`;
      networks.add(parseCidr(cidr));
    }
  }

  const probes = new Set<string>();
  const probe = (family: IpFamily, value: bigint) => {
    if (value >= 0n && value <= maxAddress(family)) probes.add(formatAddress(family, value));
  };
  for (const cidr of networks.toCidrs()) {
    const range = parseCidr(cidr);
    for (const value of [range.start, range.end, range.start - 1n, range.end + 1n])
      probe(range.family, value);
    probe(range.family, range.start + randomBelow(random, range.end - range.start));
  }
  for (let i = 0; i < (input.randomSamples ?? 64); i++) {
    probe(4, randomBelow(random, maxAddress(4)));
    probe(6, randomBelow(random, maxAddress(6)));
  }

  const differences: EquivalenceReport["differences"] = [];
  const queue = [...probes];
  const worker = async () => {
    for (let ip = queue.shift(); ip !== undefined; ip = queue.shift()) {
      const [original, published, strict] = await Promise.all([
        checkHost(ip, domain, sender, { resolver: originalResolver, helo: input.helo, enforceLimits: false }),
        checkHost(ip, domain, sender, { resolver: publishedResolver, helo: input.helo }),
        checkHost(ip, domain, sender, {
          resolver: publishedResolver,
          helo: input.helo,
          strictCounting: true,
        }),
      ]);
      if (original.result !== published.result || original.result !== strict.result) {
        differences.push({
          ip,
          original: original.result,
          published: published.result,
          strict: strict.result,
        });
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return { differences, checked: probes.size };
}
