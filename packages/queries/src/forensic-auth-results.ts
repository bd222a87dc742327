/**
 * The SPF and DKIM results a receiver wrote into the reported message's `Authentication-Results`
 * header (RFC 8601), as its header block holds them: `spf=neutral`, `dkim=none`. Null where the
 * block has no such header or result. The first header is the receiver's own (it is prepended).
 */
export function authResultsOf(headers: string): { spf: string | null; dkim: string | null } {
  const unfolded = headers.replace(/\r?\n[ \t]+/g, " ");
  const header = unfolded.split(/\r?\n/).find((line) => /^authentication-results:/i.test(line));
  if (!header) return { spf: null, dkim: null };
  const result = (method: string) =>
    new RegExp(`(?:^|[;\\s])${method}\\s*=\\s*([a-z]+)`, "i").exec(header)?.[1]?.toLowerCase() ?? null;
  return { spf: result("spf"), dkim: result("dkim") };
}
