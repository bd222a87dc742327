import {
  type IpAddress,
  parseIpAddress,
  parseNetworkAddress,
  prefixRange,
  rangeContains,
} from "./ip-networks.js";
import { expandMacros, type MacroContext, macroStringError, toQueryName } from "./macro.js";
import {
  isSpfRecord,
  parseSpfRecord,
  type Qualifier,
  type SpfMechanism,
  SpfSyntaxError,
} from "./record-parser.js";
import { type DnsAnswer, DnsLookupError, type DnsRecordType, type SpfResolver } from "./resolver.js";

export type SpfResult = "none" | "neutral" | "pass" | "fail" | "softfail" | "temperror" | "permerror";

export interface CheckHostOptions {
  resolver: SpfResolver;
  helo?: string;
  /** %{r} in explanations. */
  receiver?: string;
  /**
   * RFC 7208 §4.6.4 limits (10 lookups, 2 void lookups, 10 MX/PTR names). Off only to learn what a
   * record was meant to say when it breaks them (the equivalence checker); loops still end in permerror.
   */
  enforceLimits?: boolean;
  /**
   * Count like the strictest receivers do: a `redirect=` beside `all` costs a lookup, and empty
   * answers to MX exchanges' address queries and to the PTR query are void lookups. Published sets
   * must stay within the limits under this count too.
   */
  strictCounting?: boolean;
}

export interface CheckHostResult {
  result: SpfResult;
  explanation?: string;
  lookups: number;
  voidLookups: number;
  /** Why: the matched term, or the error. */
  reason?: string;
}

export const LOOKUP_LIMIT = 10;
export const VOID_LOOKUP_LIMIT = 2;
export const NAME_LIMIT = 10;
const MAX_DEPTH = 64;

class PermError extends Error {}
class TempError extends Error {}

const qualifierResults: Record<Qualifier, SpfResult> = {
  "+": "pass",
  "-": "fail",
  "~": "softfail",
  "?": "neutral",
};

/** A name check_host() may start from (RFC 7208 §4.3): a valid multi-label domain name. */
function isValidStartDomain(domain: string): boolean {
  const name = domain.endsWith(".") ? domain.slice(0, -1) : domain;
  if (name.length === 0 || name.length > 253) return false;
  const labels = name.split(".");
  return labels.length > 1 && labels.every((label) => label.length > 0 && label.length <= 63);
}

/** Splits an RFC5321.MailFrom address the way RFC 7208 §4.3 wants (empty local-part → postmaster). */
export function splitSender(
  sender: string,
  domain: string,
): { sender: string; localPart: string; senderDomain: string } {
  const at = sender.lastIndexOf("@");
  const localPart = at > 0 ? sender.slice(0, at) : "postmaster";
  const senderDomain = at >= 0 ? sender.slice(at + 1) : sender || domain;
  return { sender: `${localPart}@${senderDomain}`, localPart, senderDomain };
}

interface Evaluation {
  ip: IpAddress;
  options: CheckHostOptions;
  enforce: boolean;
  lookups: number;
  voidLookups: number;
  sender: ReturnType<typeof splitSender>;
  validatedNames?: Promise<string[]>;
  /** Whether the client's PTR query came back empty (a void lookup under strict counting). */
  ptrAnswerEmpty?: boolean;
}

/** RFC 7208 check_host(): the SPF verdict for a client IP, a domain and a sender. */
export async function checkHost(
  ip: string,
  domain: string,
  sender: string,
  options: CheckHostOptions,
): Promise<CheckHostResult> {
  const address = parseIpAddress(ip);
  if (!address) throw new TypeError(`not an IP address: ${ip}`);
  const evaluation: Evaluation = {
    ip: address,
    options,
    enforce: options.enforceLimits ?? true,
    lookups: 0,
    voidLookups: 0,
    sender: splitSender(sender, domain),
  };
  const counts = () => ({ lookups: evaluation.lookups, voidLookups: evaluation.voidLookups });
  try {
    const { result, explanation, reason } = await evaluateDomain(evaluation, domain, 0);
    return { result, ...(explanation !== undefined ? { explanation } : {}), ...counts(), reason };
  } catch (error) {
    if (error instanceof PermError) return { result: "permerror", ...counts(), reason: error.message };
    if (error instanceof TempError) return { result: "temperror", ...counts(), reason: error.message };
    throw error;
  }
}

interface DomainVerdict {
  result: SpfResult;
  explanation?: string;
  reason?: string;
}

async function lookup(name: string, type: DnsRecordType, evaluation: Evaluation): Promise<DnsAnswer> {
  try {
    return await evaluation.options.resolver.lookup(name, type);
  } catch (error) {
    if (error instanceof DnsLookupError) throw new TempError(error.message);
    throw error;
  }
}

/** RFC 7208 §4.5: the one SPF record among a domain's TXT records; null for none, PermError for several. */
function selectSpfRecord(values: string[], domain: string): string | null {
  const records = values.filter(isSpfRecord);
  if (records.length > 1) throw new PermError(`${domain} has ${records.length} SPF records`);
  return records[0] ?? null;
}

async function evaluateDomain(evaluation: Evaluation, domain: string, depth: number): Promise<DomainVerdict> {
  if (depth > MAX_DEPTH) throw new PermError("include/redirect nesting too deep (loop)");
  if (!isValidStartDomain(domain)) return { result: "none", reason: "malformed domain" };
  const answer = await lookup(domain, "TXT", evaluation);
  const text = selectSpfRecord(answer.values, domain);
  if (text === null) return { result: "none", reason: `no SPF record at ${domain}` };
  let record: ReturnType<typeof parseSpfRecord>;
  try {
    record = parseSpfRecord(text);
  } catch (error) {
    if (error instanceof SpfSyntaxError) throw new PermError(`${domain}: ${error.message}`);
    throw error;
  }
  const context = macroContext(evaluation, domain);
  if (
    evaluation.options.strictCounting &&
    record.redirect &&
    record.mechanisms.some((m) => m.kind === "all")
  ) {
    countLookup(evaluation);
  }
  for (const mechanism of record.mechanisms) {
    if (await matches(mechanism, evaluation, context, depth)) {
      const result = qualifierResults[mechanism.qualifier];
      const explanation =
        result === "fail" && record.exp ? await explain(record.exp.value, evaluation, context) : undefined;
      return { result, explanation, reason: `${domain}: ${mechanism.term}` };
    }
  }
  if (record.redirect) {
    countLookup(evaluation);
    const target = toQueryName(await expandMacros(record.redirect.value, context));
    const verdict = target
      ? await evaluateDomain(evaluation, target, depth + 1)
      : { result: "none" as const };
    if (verdict.result === "none") throw new PermError(`redirect target ${target} has no SPF record`);
    return verdict;
  }
  return { result: "neutral", reason: `${domain}: default` };
}

function macroContext(evaluation: Evaluation, domain: string): MacroContext {
  return {
    ...evaluation.sender,
    domain,
    ip: evaluation.ip,
    helo: evaluation.options.helo ?? evaluation.sender.senderDomain,
    receiver: evaluation.options.receiver ?? "unknown",
    validatedName: async () => {
      const names = await validatedNames(evaluation);
      const lower = domain.toLowerCase();
      const inDomain = names.find((name) => name === lower || name.endsWith(`.${lower}`));
      return inDomain ?? names[0] ?? "unknown";
    },
  };
}

function countLookup(evaluation: Evaluation): void {
  evaluation.lookups++;
  if (evaluation.enforce && evaluation.lookups > LOOKUP_LIMIT) {
    throw new PermError(`more than ${LOOKUP_LIMIT} DNS lookups`);
  }
}

function countVoid(evaluation: Evaluation, answer: DnsAnswer): void {
  countVoidIf(evaluation, answer.values.length === 0);
}

function countVoidIf(evaluation: Evaluation, empty: boolean): void {
  if (!empty) return;
  evaluation.voidLookups++;
  if (evaluation.enforce && evaluation.voidLookups > VOID_LOOKUP_LIMIT) {
    throw new PermError(`more than ${VOID_LOOKUP_LIMIT} void lookups`);
  }
}

async function targetName(mechanism: SpfMechanism, context: MacroContext): Promise<string | null> {
  if (mechanism.domainSpec === undefined) return context.domain;
  // A name that macros made invalid matches nothing (RFC 7208 §4.8); a literal one fails parsing.
  return toQueryName(await expandMacros(mechanism.domainSpec, context));
}

async function addressesMatch(
  name: string,
  mechanism: SpfMechanism,
  evaluation: Evaluation,
): Promise<boolean> {
  const { ip } = evaluation;
  const answer = await lookup(name, ip.family === 4 ? "A" : "AAAA", evaluation);
  if (evaluation.options.strictCounting) countVoid(evaluation, answer);
  return addressListMatches(answer.values, mechanism, ip);
}

function addressListMatches(addresses: string[], mechanism: SpfMechanism, ip: IpAddress): boolean {
  const prefix = ip.family === 4 ? mechanism.cidr4 : mechanism.cidr6;
  return addresses.some((address) => {
    const value = parseNetworkAddress(address, ip.family);
    return value !== null && rangeContains(prefixRange(ip.family, value, prefix), ip);
  });
}

async function matches(
  mechanism: SpfMechanism,
  evaluation: Evaluation,
  context: MacroContext,
  depth: number,
): Promise<boolean> {
  const { ip } = evaluation;
  switch (mechanism.kind) {
    case "all":
      return true;
    case "ip4":
    case "ip6": {
      const family = mechanism.kind === "ip4" ? 4 : 6;
      if (ip.family !== family) return false;
      const value = parseNetworkAddress(mechanism.address!, family)!;
      return rangeContains(prefixRange(family, value, family === 4 ? mechanism.cidr4 : mechanism.cidr6), ip);
    }
    case "include": {
      countLookup(evaluation);
      const target = await targetName(mechanism, context);
      const verdict = target ? await evaluateDomain(evaluation, target, depth + 1) : { result: "none" };
      if (verdict.result === "none") throw new PermError(`include target ${target} has no SPF record`);
      return verdict.result === "pass";
    }
    case "a": {
      countLookup(evaluation);
      const target = await targetName(mechanism, context);
      if (!target) return false;
      const answer = await lookup(target, ip.family === 4 ? "A" : "AAAA", evaluation);
      countVoid(evaluation, answer);
      return addressListMatches(answer.values, mechanism, ip);
    }
    case "mx": {
      countLookup(evaluation);
      const target = await targetName(mechanism, context);
      if (!target) return false;
      const answer = await lookup(target, "MX", evaluation);
      countVoid(evaluation, answer);
      if (evaluation.enforce && answer.values.length > NAME_LIMIT) {
        throw new PermError(`${target} has more than ${NAME_LIMIT} MX records`);
      }
      for (const exchange of answer.values) {
        if (exchange && (await addressesMatch(exchange, mechanism, evaluation))) return true;
      }
      return false;
    }
    case "ptr": {
      countLookup(evaluation);
      const target = (await targetName(mechanism, context))?.toLowerCase();
      if (!target) return false;
      const names = await validatedNames(evaluation);
      if (evaluation.options.strictCounting) countVoidIf(evaluation, evaluation.ptrAnswerEmpty === true);
      return names.some((name) => name === target || name.endsWith(`.${target}`));
    }
    case "exists": {
      countLookup(evaluation);
      const target = await targetName(mechanism, context);
      if (!target) return false;
      const answer = await lookup(target, "A", evaluation);
      countVoid(evaluation, answer);
      return answer.values.length > 0;
    }
  }
}

function reverseName(ip: IpAddress): string {
  if (ip.family === 4) {
    const octets = [24n, 16n, 8n, 0n].map((shift) => String((ip.value >> shift) & 0xffn));
    return `${octets.reverse().join(".")}.in-addr.arpa`;
  }
  return `${ip.value.toString(16).padStart(32, "0").split("").reverse().join(".")}.ip6.arpa`;
}

/** RFC 7208 §5.5: PTR names of the client whose addresses include it (DNS errors skip a name). */
function validatedNames(evaluation: Evaluation): Promise<string[]> {
  evaluation.validatedNames ??= (async () => {
    const { resolver } = evaluation.options;
    let names: string[];
    try {
      names = (await resolver.lookup(reverseName(evaluation.ip), "PTR")).values;
    } catch {
      return [];
    }
    evaluation.ptrAnswerEmpty = names.length === 0;
    const checked = names.slice(0, NAME_LIMIT).map(async (name) => {
      try {
        const answer = await resolver.lookup(name, evaluation.ip.family === 4 ? "A" : "AAAA");
        return answer.values.some((address) => {
          const value = parseNetworkAddress(address, evaluation.ip.family);
          return value === evaluation.ip.value;
        })
          ? name
          : null;
      } catch {
        return null;
      }
    });
    return (await Promise.all(checked)).filter((name): name is string => name !== null);
  })();
  return evaluation.validatedNames;
}

/** RFC 7208 §6.2: the explanation for a fail; any problem gives no explanation, never an error. */
async function explain(
  spec: string,
  evaluation: Evaluation,
  context: MacroContext,
): Promise<string | undefined> {
  try {
    const name = toQueryName(await expandMacros(spec, context));
    if (!name) return undefined;
    const answer = await evaluation.options.resolver.lookup(name, "TXT");
    if (answer.values.length !== 1) return undefined;
    const text = answer.values[0]!;
    if (/[^\x00-\x7f]/.test(text) || macroStringError(text, { explanation: true })) return undefined;
    return await expandMacros(text, context);
  } catch {
    return undefined;
  }
}
