/** How far into a refused input its policy's domain is looked for: a report's head is short. */
const headBytes = 64 * 1024;
const policyDomain =
  /<(?:[\w-]+:)?policy_published\b[^>]*>[\s\S]*?<(?:[\w-]+:)?domain>\s*([^<\s]{1,253})\s*</;
const hostName = /^[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?$/;

/**
 * The domain a refused aggregate report names in its policy_published, when its bytes are XML
 * that says so; undefined otherwise (compressed, not a report, no such element). It lets the
 * tenant that has the domain see the refusal among its inputs.
 */
export function domainNamedByRefused(raw: Uint8Array): string | undefined {
  const head = Buffer.from(raw.buffer, raw.byteOffset, Math.min(raw.byteLength, headBytes)).toString("utf8");
  const domain = policyDomain.exec(head)?.[1]?.toLowerCase().replace(/\.$/, "");
  return domain && hostName.test(domain) ? domain : undefined;
}
