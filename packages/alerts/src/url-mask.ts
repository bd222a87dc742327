/**
 * A webhook URL as someone who may not change it sees it: scheme, host and port, the rest masked.
 * Chat services put their token in the path or the query, and a URL may carry user and password.
 */
export function maskedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const rest = parsed.pathname === "/" && parsed.search === "" && parsed.hash === "" ? "/" : "/…";
    return `${parsed.protocol}//${parsed.host}${rest}`;
  } catch {
    return "…";
  }
}
