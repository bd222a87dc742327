/** The header block of a message (up to the first empty line), `\n`-separated, folding kept. */
export function headerBlockOf(message: string): string {
  const normalised = message.replace(/\r\n?/g, "\n").replace(/^\n+/, "");
  const end = normalised.indexOf("\n\n");
  return (end < 0 ? normalised : normalised.slice(0, end)).replace(/\n+$/, "");
}

/** Header fields of a block, unfolded, names lower-case, in order. */
export function headerFieldsOf(block: string): { name: string; value: string }[] {
  const fields: { name: string; value: string }[] = [];
  for (const line of block.replace(/\r\n?/g, "\n").split("\n")) {
    if (/^[ \t]/.test(line) && fields.length > 0) {
      fields[fields.length - 1]!.value += ` ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    fields.push({ name: line.slice(0, colon).trim().toLowerCase(), value: line.slice(colon + 1).trim() });
  }
  return fields;
}

export function firstField(fields: { name: string; value: string }[], name: string): string | null {
  return fields.find((field) => field.name === name)?.value ?? null;
}

/** RFC 5322 date → ISO-8601 UTC without milliseconds; null when it does not parse. */
export function toUtcIso(raw: string | null): string | null {
  if (!raw) return null;
  const ms = Date.parse(raw.replace(/\([^)]*\)/g, " ").trim());
  if (Number.isNaN(ms)) return null;
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}
