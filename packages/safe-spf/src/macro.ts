import { formatAddress, type IpAddress } from "./ip-networks.js";

/** What macro letters expand to for one check_host() evaluation (RFC 7208 §7.3). */
export interface MacroContext {
  sender: string;
  localPart: string;
  senderDomain: string;
  domain: string;
  ip: IpAddress;
  helo: string;
  receiver: string;
  /** %{p}: only resolved when a record uses it, as it costs DNS queries. */
  validatedName: () => Promise<string>;
}

const domainLetters = "slodiphv";
const explanationLetters = "slodiphvcrt";
const macroExpand = /%\{([a-z])(\d*)(r?)([.\-+,/_=]*)\}|%%|%_|%-/gi;

/** Why the text is not a valid macro-string (explain-string when `explanation`), or null. */
export function macroStringError(text: string, { explanation }: { explanation: boolean }): string | null {
  const letters = explanation ? explanationLetters : domainLetters;
  const literal = explanation ? /^[\x20-\x24\x26-\x7e]*$/ : /^[\x21-\x24\x26-\x7e]*$/;
  let last = 0;
  for (const match of text.matchAll(macroExpand)) {
    if (!literal.test(text.slice(last, match.index))) return "invalid character or stray %";
    const letter = match[1];
    if (letter !== undefined) {
      if (!letters.includes(letter.toLowerCase())) return `macro letter "${letter}" not allowed here`;
      if (match[2] !== "" && Number(match[2]) === 0) return "macro digit transformer must be nonzero";
    }
    last = match.index + match[0].length;
  }
  if (!literal.test(text.slice(last))) return "invalid character or stray %";
  return null;
}

/** RFC 3986 escaping of everything but unreserved characters, for upper-case macro letters. */
function urlEscape(value: string): string {
  return Array.from(Buffer.from(value, "utf8"))
    .map((byte) => {
      const char = String.fromCharCode(byte);
      return /[A-Za-z0-9\-._~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
    })
    .join("");
}

function transform(value: string, digits: string, reverse: string, delimiters: string): string {
  const splitOn = delimiters === "" ? "." : delimiters;
  let parts = value.split(new RegExp(`[${splitOn.replace(/[-\\\]^/]/g, "\\$&")}]`));
  if (reverse) parts = parts.reverse();
  if (digits !== "") parts = parts.slice(Math.max(0, parts.length - Number(digits)));
  return parts.join(".");
}

function ipForMacro(ip: IpAddress, letter: "i" | "c"): string {
  if (ip.family === 4 || letter === "c") return formatAddress(ip.family, ip.value);
  return ip.value.toString(16).toUpperCase().padStart(32, "0").split("").join(".");
}

async function letterValue(letter: string, ctx: MacroContext): Promise<string> {
  switch (letter) {
    case "s":
      return ctx.sender;
    case "l":
      return ctx.localPart;
    case "o":
      return ctx.senderDomain;
    case "d":
      return ctx.domain;
    case "i":
    case "c":
      return ipForMacro(ctx.ip, letter);
    case "p":
      return ctx.validatedName();
    case "v":
      return ctx.ip.family === 4 ? "in-addr" : "ip6";
    case "h":
      return ctx.helo;
    case "r":
      return ctx.receiver;
    case "t":
      return String(Math.floor(Date.now() / 1000));
    default:
      throw new Error(`unknown macro letter ${letter}`);
  }
}

/** Expands a macro-string that the parser already validated. */
export async function expandMacros(text: string, ctx: MacroContext): Promise<string> {
  let out = "";
  let last = 0;
  for (const match of text.matchAll(macroExpand)) {
    out += text.slice(last, match.index);
    last = match.index + match[0].length;
    if (match[0] === "%%") out += "%";
    else if (match[0] === "%_") out += " ";
    else if (match[0] === "%-") out += "%20";
    else {
      const letter = match[1]!;
      const value = transform(await letterValue(letter.toLowerCase(), ctx), match[2]!, match[3]!, match[4]!);
      out += letter === letter.toUpperCase() ? urlEscape(value) : value;
    }
  }
  return out + text.slice(last);
}

/**
 * Replaces %{d…} macros by their value for a known current domain, so that a term can move into a
 * record published under another name and still mean the same. Other macros stay.
 */
export function substituteDomainMacros(text: string, domain: string): string {
  return text.replace(
    macroExpand,
    (whole, letter?: string, digits?: string, reverse?: string, delims?: string) => {
      if (letter === undefined || letter.toLowerCase() !== "d") return whole;
      const value = transform(domain, digits!, reverse!, delims!);
      return letter === "D" ? urlEscape(value) : value;
    },
  );
}

export function hasMacros(text: string): boolean {
  return /%\{/.test(text);
}

/**
 * Turns an expanded domain-spec into a query name (RFC 7208 §7.3: drop labels from the left until it
 * fits 253 characters), or null when it cannot be a domain name.
 */
export function toQueryName(expanded: string): string | null {
  let name = expanded.endsWith(".") ? expanded.slice(0, -1) : expanded;
  while (name.length > 253 && name.includes(".")) name = name.slice(name.indexOf(".") + 1);
  if (name.length === 0 || name.length > 253) return null;
  const labels = name.split(".");
  if (labels.some((label) => label.length === 0 || label.length > 63)) return null;
  return name;
}
