import { isIpv4Literal, isIpv6Literal } from "./ip-networks.js";
import { macroStringError } from "./macro.js";

export type Qualifier = "+" | "-" | "~" | "?";
export type MechanismKind = "all" | "include" | "a" | "mx" | "ptr" | "ip4" | "ip6" | "exists";

export interface SpfMechanism {
  type: "mechanism";
  kind: MechanismKind;
  qualifier: Qualifier;
  /** Target of include/exists/a/mx/ptr (a macro-string); absent means the current domain. */
  domainSpec?: string;
  /** ip4/ip6 network address. */
  address?: string;
  /** Prefix length for IPv4 matches (ip4, a, mx); defaults to 32. */
  cidr4: number;
  /** Prefix length for IPv6 matches (ip6, a, mx); defaults to 128. */
  cidr6: number;
  term: string;
  position: number;
}

export interface SpfModifier {
  type: "modifier";
  name: string;
  value: string;
  term: string;
  position: number;
}

export interface SpfRecord {
  text: string;
  terms: (SpfMechanism | SpfModifier)[];
  mechanisms: SpfMechanism[];
  redirect?: SpfModifier;
  exp?: SpfModifier;
}

export class SpfSyntaxError extends Error {
  constructor(
    message: string,
    readonly term: string,
    readonly position: number,
  ) {
    super(`${message} (term "${term}" at position ${position})`);
    this.name = "SpfSyntaxError";
  }
}

const versionPattern = /^v=spf1(?: |$)/i;
const modifierPattern = /^([a-z][a-z0-9\-_.]*)=(.*)$/is;
const mechanismPattern = /^([+\-~?]?)([a-z0-9]+)(.*)$/is;
const cidrLength = /^(0|[1-9]\d{0,2})$/;
const topLabel = /^([a-z0-9]*[a-z][a-z0-9]*|[a-z0-9]+-[a-z0-9-]*[a-z0-9])$/i;
const mechanismKinds = new Set<string>(["all", "include", "a", "mx", "ptr", "ip4", "ip6", "exists"]);

/** True when the text is an SPF version 1 record (the selection rule of RFC 7208 §4.5). */
export function isSpfRecord(text: string): boolean {
  return versionPattern.test(text);
}

export function parseSpfRecord(text: string): SpfRecord {
  const version = /^v=spf1/i.exec(text);
  if (!version || !isSpfRecord(text)) throw new SpfSyntaxError("not an SPF record", text.slice(0, 8), 0);
  // RFC 7208 §3.1: records are 7-bit ASCII; an error anywhere in the record is a permerror.
  const nonAscii = /[^\x00-\x7f]/.exec(text);
  if (nonAscii) {
    throw new SpfSyntaxError("non-ASCII character", termAt(text, nonAscii.index).term, nonAscii.index);
  }
  const record: SpfRecord = { text, terms: [], mechanisms: [] };
  let position = version[0].length;
  while (position < text.length) {
    if (text[position] === " ") {
      position++;
      continue;
    }
    const end = text.indexOf(" ", position);
    const term = text.slice(position, end === -1 ? text.length : end);
    const parsed = parseTerm(term, position);
    record.terms.push(parsed);
    if (parsed.type === "mechanism") record.mechanisms.push(parsed);
    else if (parsed.name === "redirect" || parsed.name === "exp") {
      if (record[parsed.name]) throw new SpfSyntaxError(`${parsed.name} given twice`, term, position);
      record[parsed.name] = parsed;
    }
    position += term.length;
  }
  return record;
}

function termAt(text: string, index: number): { term: string } {
  const start = text.lastIndexOf(" ", index) + 1;
  const end = text.indexOf(" ", index);
  return { term: text.slice(start, end === -1 ? text.length : end) };
}

function parseTerm(term: string, position: number): SpfMechanism | SpfModifier {
  const fail = (message: string): never => {
    throw new SpfSyntaxError(message, term, position);
  };
  const modifier = modifierPattern.exec(term);
  if (modifier) {
    const name = modifier[1]!.toLowerCase();
    const value = modifier[2]!;
    if (name === "redirect" || name === "exp") {
      const error = domainSpecError(value);
      if (error) fail(`${name}: ${error}`);
    } else {
      const error = macroStringError(value, { explanation: false });
      if (error) fail(error);
    }
    return { type: "modifier", name, value, term, position };
  }
  const mechanism = mechanismPattern.exec(term);
  if (!mechanism || !mechanismKinds.has(mechanism[2]!.toLowerCase()))
    return fail("unknown mechanism or modifier");
  const kind = mechanism![2]!.toLowerCase() as MechanismKind;
  const rest = mechanism![3]!;
  const result: SpfMechanism = {
    type: "mechanism",
    kind,
    qualifier: (mechanism![1] || "+") as Qualifier,
    cidr4: 32,
    cidr6: 128,
    term,
    position,
  };
  const requireDomain = (spec: string) => {
    const error = domainSpecError(spec);
    if (error) fail(error);
    result.domainSpec = spec;
  };
  switch (kind) {
    case "all":
      if (rest !== "") fail("all takes no argument");
      break;
    case "include":
    case "exists":
      if (!rest.startsWith(":")) fail(`${kind} needs a domain`);
      requireDomain(rest.slice(1));
      break;
    case "ptr":
      if (rest !== "") {
        if (!rest.startsWith(":")) fail("ptr takes only a domain");
        requireDomain(rest.slice(1));
      }
      break;
    case "a":
    case "mx": {
      const cidr = /(?:\/(\d+))?(?:\/\/(\d+))?$/.exec(rest)!;
      const spec = rest.slice(0, cidr.index);
      if (spec !== "") {
        if (!spec.startsWith(":")) fail(`malformed ${kind} mechanism`);
        requireDomain(spec.slice(1));
      }
      if (cidr[1] !== undefined)
        result.cidr4 = prefixLength(cidr[1], 32) ?? fail("invalid IPv4 prefix length");
      if (cidr[2] !== undefined)
        result.cidr6 = prefixLength(cidr[2], 128) ?? fail("invalid IPv6 prefix length");
      break;
    }
    case "ip4":
    case "ip6": {
      if (!rest.startsWith(":")) fail(`${kind} needs a network`);
      const value = rest.slice(1);
      const slash = value.indexOf("/");
      const address = slash === -1 ? value : value.slice(0, slash);
      const valid = kind === "ip4" ? isIpv4Literal(address) : isIpv6Literal(address);
      if (!valid) fail(`invalid ${kind} address`);
      result.address = address;
      if (slash !== -1) {
        const max = kind === "ip4" ? 32 : 128;
        const length = prefixLength(value.slice(slash + 1), max) ?? fail("invalid prefix length");
        if (kind === "ip4") result.cidr4 = length;
        else result.cidr6 = length;
      }
      break;
    }
  }
  return result;
}

function prefixLength(text: string, max: number): number | undefined {
  if (!cidrLength.test(text)) return undefined;
  const value = Number(text);
  return value <= max ? value : undefined;
}

/** RFC 7208 domain-spec: a macro-string that ends in a macro or in "." toplabel. */
export function domainSpecError(spec: string): string | null {
  if (spec === "") return "empty domain";
  const macroError = macroStringError(spec, { explanation: false });
  if (macroError) return macroError;
  if (/(%\{[^}]*\}|%%|%_|%-)$/.test(spec)) return null;
  const trimmed = spec.endsWith(".") ? spec.slice(0, -1) : spec;
  const dot = trimmed.lastIndexOf(".");
  if (dot === -1) return "domain needs at least two labels";
  if (!topLabel.test(trimmed.slice(dot + 1))) return "invalid top-level label";
  return null;
}

const qualifierText = (qualifier: Qualifier) => (qualifier === "+" ? "" : qualifier);

/** The mechanism as text with its domain-spec replaced (used when terms are moved to another record). */
export function formatMechanism(mechanism: SpfMechanism, domainSpec: string | undefined): string {
  let text = `${qualifierText(mechanism.qualifier)}${mechanism.kind}`;
  if (domainSpec !== undefined) text += `:${domainSpec}`;
  if (mechanism.kind === "a" || mechanism.kind === "mx") {
    if (mechanism.cidr4 !== 32) text += `/${mechanism.cidr4}`;
    if (mechanism.cidr6 !== 128) text += `//${mechanism.cidr6}`;
  }
  return text;
}

export function formatQualifier(qualifier: Qualifier): string {
  return qualifierText(qualifier);
}
