import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { getDomain } from "tldts";

/** IPv6 in RFC 5952 form, IPv4-mapped IPv6 as plain IPv4; null when not an address. */
export function normaliseIp(raw: string): string | null {
  const text = raw.trim();
  const family = isIP(text);
  if (family === 4) return text;
  if (family !== 6) return null;
  const address = ipaddr.IPv6.parse(text);
  if (address.isIPv4MappedAddress()) return address.toIPv4Address().toString();
  return address.toRFC5952String();
}

/**
 * Per the API contract: org_name (or the email's domain), reduced to its registrable domain when
 * it is one name. null for a name of dotted labels one of which is empty (`example.com..`, `a..b`,
 * `.com`; one trailing dot is the root's): the public suffix list takes `example.com..` for
 * `example.com`, and a name no DNS could hold must not count as another.
 */
export function organizationOf(orgName: string, email: string): string | null {
  let name = orgName.trim();
  if (name === "") name = email.slice(email.lastIndexOf("@") + 1).trim();
  name = name.toLowerCase();
  if (name === "" || /\s/.test(name)) return name;
  const labels = name.replace(/\.$/, "").split(".");
  if (labels.length > 1 && labels.includes("")) return null;
  return getDomain(name) ?? name;
}

/** Report ids arrive as `<id@host>` from some reporters and as `id` from others for the same report. */
export function normaliseReportId(raw: string): string {
  let id = raw.trim();
  if (id.startsWith("<") && id.endsWith(">")) id = id.slice(1, -1).trim();
  const at = id.indexOf("@");
  return at >= 0 ? id.slice(0, at) : id;
}

/** `arc=pass` / `arc=fail` in a policy_evaluated reason, as receivers such as Microsoft write it. */
export function arcOf(reasons: readonly { type: string; comment: string | null }[]): "pass" | "fail" | null {
  let arc: "pass" | "fail" | null = null;
  for (const reason of reasons) {
    for (const text of [reason.type, reason.comment ?? ""]) {
      const match = /\barc\s*=\s*(pass|fail)\b/i.exec(text);
      if (match) {
        if (match[1]!.toLowerCase() === "pass") return "pass";
        arc = "fail";
      }
    }
  }
  return arc;
}
