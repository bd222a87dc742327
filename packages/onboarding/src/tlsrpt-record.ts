/** What a TLS-RPT record (RFC 8460 §3) says: where SMTP TLS reports of the domain go. */
export interface TlsRptRecordReading {
  valid: boolean;
  error: string | null;
  /** The rua URIs, mailto: or https:, as written. */
  rua: string[];
}

/** A TXT record starting with v=TLSRPTv1 (RFC 8460 §3: the version tag comes first). */
export const isTlsRptRecord = (text: string) => /^\s*v\s*=\s*TLSRPTv1\s*(;|$)/.test(text);

export function readTlsRptRecord(text: string): TlsRptRecordReading {
  const tags = new Map<string, string>();
  for (const part of text
    .split(";")
    .map((entry) => entry.trim())
    .filter(Boolean)) {
    const equals = part.indexOf("=");
    if (equals < 1) return { valid: false, error: `"${part.slice(0, 40)}" is not a tag=value pair`, rua: [] };
    tags.set(part.slice(0, equals).trim().toLowerCase(), part.slice(equals + 1).trim());
  }
  const rua = (tags.get("rua") ?? "")
    .split(",")
    .map((uri) => uri.trim())
    .filter(Boolean);
  if (rua.length === 0)
    return { valid: false, error: "it has no rua tag: receivers have nowhere to send reports", rua };
  const wrong = rua.find((uri) => !/^(mailto:[^@\s]+@[^@\s]+|https:\/\/\S+)$/i.test(uri));
  if (wrong)
    return { valid: false, error: `rua "${wrong.slice(0, 80)}" is neither a mailto: nor an https: URI`, rua };
  return { valid: true, error: null, rua };
}
