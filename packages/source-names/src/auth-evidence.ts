import type { AggregateRowRecord } from "@dmarc-ledger/events";
import { getDomain } from "tldts";

/** Per registrable domain, the messages whose passing DKIM or SPF result named it. */
export type AuthEvidence = ReadonlyMap<string, number>;

/**
 * The authentication domains that rows of reports carry for each source address: the
 * registrable domain (tldts) of every passing DKIM d= and SPF domain, with the messages that
 * carried it (a domain counted once per row). Only passing results count: anyone can write any
 * d= or MAIL FROM, but a pass says the domain's owner signed the message or lists the address.
 */
export function authEvidenceByIp(rows: Iterable<AggregateRowRecord>): Map<string, Map<string, number>> {
  const byIp = new Map<string, Map<string, number>>();
  for (const row of rows) {
    const domains = new Set<string>();
    for (const dkim of row.dkim) if (dkim.result.toLowerCase() === "pass") domains.add(dkim.domain);
    for (const spf of row.spf) if (spf.result.toLowerCase() === "pass") domains.add(spf.domain);
    const registrable = new Set<string>();
    for (const domain of domains) {
      const base = getDomain(domain.toLowerCase());
      if (base) registrable.add(base);
    }
    if (registrable.size === 0) continue;
    const evidence = byIp.get(row.sourceIp) ?? new Map<string, number>();
    byIp.set(row.sourceIp, evidence);
    for (const base of registrable) evidence.set(base, (evidence.get(base) ?? 0) + row.count);
  }
  return byIp;
}
