/** What the onboarding check reads from a domain's DMARC record (RFC 7489 §6.3). */
export interface DmarcRecordReading {
  valid: boolean;
  /** Why the record is not valid; null when it is. */
  error: string | null;
  policy: string | null;
  subdomainPolicy: string | null;
  /** The pct tag, 100 when absent. */
  pct: number | null;
  rua: string[];
  ruf: string[];
}

export const isDmarcRecord = (text: string) => /^v\s*=\s*DMARC1\s*(;|$)/.test(text);

const policies = new Set(["none", "quarantine", "reject"]);

function uris(value: string | undefined): { list: string[]; bad: string | null } {
  const list = (value ?? "")
    .split(",")
    .map((uri) => uri.trim())
    .filter(Boolean);
  // A size limit may follow the address ("mailto:a@b.example!10m").
  const bad = list.find((uri) => !/^mailto:[^@\s]+@[^@\s!]+(![0-9]+[kmgt]?)?$/i.test(uri)) ?? null;
  return { list, bad };
}

/** The domain of a `mailto:` report URI, lower-case; null when it has none. */
export function mailtoDomain(uri: string): string | null {
  const match = /^mailto:[^@\s]+@([^@\s!]+)/i.exec(uri.trim());
  return match ? match[1]!.toLowerCase().replace(/\.$/, "") : null;
}

export function readDmarcRecord(text: string): DmarcRecordReading {
  const tags = new Map<string, string>();
  const parts = text
    .split(";")
    .map((part) => part.trim())
    .filter(Boolean);
  for (const part of parts) {
    const equals = part.indexOf("=");
    if (equals <= 0) continue;
    const name = part.slice(0, equals).trim().toLowerCase();
    if (!tags.has(name)) tags.set(name, part.slice(equals + 1).trim());
  }
  const policy = tags.get("p")?.toLowerCase() ?? null;
  const subdomainPolicy = tags.get("sp")?.toLowerCase() ?? null;
  const pctText = tags.get("pct");
  const pct = pctText === undefined ? 100 : /^\d{1,3}$/.test(pctText) ? Number(pctText) : null;
  const rua = uris(tags.get("rua"));
  const ruf = uris(tags.get("ruf"));
  let error: string | null = null;
  if (!isDmarcRecord(text)) error = 'it does not start with "v=DMARC1;"';
  else if (policy === null) error = "it has no p= tag";
  else if (!policies.has(policy)) error = `p=${policy} is not none, quarantine or reject`;
  else if (subdomainPolicy !== null && !policies.has(subdomainPolicy))
    error = `sp=${subdomainPolicy} is not none, quarantine or reject`;
  else if (pct === null || pct > 100) error = `pct=${pctText} is not a number from 0 to 100`;
  else if (rua.bad) error = `rua has "${rua.bad}", which is not a mailto: address`;
  else if (ruf.bad) error = `ruf has "${ruf.bad}", which is not a mailto: address`;
  return { valid: error === null, error, policy, subdomainPolicy, pct, rua: rua.list, ruf: ruf.list };
}
