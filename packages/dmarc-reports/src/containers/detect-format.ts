export type InputFormat = "empty" | "gzip" | "zip" | "xml" | "json" | "html" | "mail" | "unknown";

/** What the first bytes of an input say it is; MIME types and file names are not trusted. */
export function detectFormat(head: Uint8Array): InputFormat {
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return "gzip";
  if (head.length >= 4 && head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04)
    return "zip";
  const text = Buffer.from(head.subarray(0, 4096))
    .toString("latin1")
    .replace(/^(\xEF\xBB\xBF)/, "");
  const trimmed = text.trimStart();
  if (trimmed === "") return "empty";
  if (trimmed.startsWith("<")) {
    return /^<(!doctype\s+html|html[\s>])/i.test(trimmed) ? "html" : "xml";
  }
  // An SMTP TLS report (RFC 8460 §4) is one JSON object.
  if (trimmed.startsWith("{")) return "json";
  // A mail starts with header fields (or an mbox "From " line).
  if (/^(From [^\r\n]*\r?\n)?[!-9;-~]+:[^\r\n]*\r?\n/.test(text)) return "mail";
  return "unknown";
}
