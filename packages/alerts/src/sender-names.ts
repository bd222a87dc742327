import type { SourceIpResolved } from "@dmarc-ledger/events";
import { sql, type Transaction } from "kysely";
import { getDomain } from "tldts";
import type { AlertsSchema } from "./schema.js";

type Trx = Transaction<AlertsSchema>;

/** A source IP's sender, as aggregate_by_sender names it (docs/api.md). */
export interface SenderName {
  kind: "service" | "base_domain" | "asn" | "unknown";
  sender: string;
}

const isDefinitive = (outcome: SourceIpResolved["outcome"]) => outcome !== "timeout" && outcome !== "error";

/**
 * Keeps what names a source IP the way the source_ip_name read model does: a timeout or an error
 * moves only the AS (which needs no DNS); a definitive answer replaces the service and base domain.
 */
export async function recordSourceName(trx: Trx, answer: SourceIpResolved): Promise<void> {
  const asn = answer.naming?.asn?.number ?? null;
  if (isDefinitive(answer.outcome)) {
    const baseDomain = answer.naming
      ? (answer.naming.baseDomain ?? "")
      : answer.confirmed && answer.name
        ? (getDomain(answer.name) ?? "")
        : "";
    const row = { service: answer.naming?.service?.name ?? null, base_domain: baseDomain, asn };
    await trx
      .insertInto("alert_source_name")
      .values({ source_ip: answer.ip, ...row })
      .onConflict((oc) => oc.column("source_ip").doUpdateSet(row))
      .execute();
  } else {
    const row = answer.naming ? { asn } : {};
    await trx
      .insertInto("alert_source_name")
      .values({ source_ip: answer.ip, service: null, base_domain: "", asn })
      .onConflict((oc) => (answer.naming ? oc.column("source_ip").doUpdateSet(row) : oc.doNothing()))
      .execute();
  }
}

/** The senders of the IPs the evaluator has a name for (an IP not resolved yet is absent). */
export async function sendersOf(trx: Trx, ips: readonly string[]): Promise<Map<string, SenderName>> {
  const out = new Map<string, SenderName>();
  for (let at = 0; at < ips.length; at += 1000) {
    const rows = await trx
      .selectFrom("alert_source_name")
      .selectAll()
      .where("source_ip", "in", ips.slice(at, at + 1000))
      .execute();
    for (const row of rows) out.set(row.source_ip, senderOf(row));
  }
  return out;
}

export function senderOf(row: {
  service: string | null;
  base_domain: string | null;
  asn: string | null;
}): SenderName {
  if (row.service !== null) return { kind: "service", sender: row.service };
  if (row.base_domain) return { kind: "base_domain", sender: row.base_domain };
  if (row.asn !== null) return { kind: "asn", sender: `AS${row.asn}` };
  return { kind: "unknown", sender: "unknown" };
}

/**
 * Whether a source IP is approved for a domain: the decision on the most specific range holding
 * it, else the one on its sender, else none (null), as aggregate_by_sender decides it.
 */
export async function approvalOf(
  trx: Trx,
  domain: string,
  ip: string,
  sender: string,
): Promise<boolean | null> {
  const { rows } = await sql<{ approved: boolean | null }>`select coalesce(
      (select a.approved from alert_sender_approval a
        where a.domain = ${domain} and a.kind = 'range' and ${ip}::inet <<= a.sender::inet
        order by masklen(a.sender::inet) desc limit 1),
      (select a.approved from alert_sender_approval a
        where a.domain = ${domain} and a.kind = 'service' and a.sender = ${sender})) as approved`.execute(
    trx,
  );
  return rows[0]?.approved ?? null;
}
