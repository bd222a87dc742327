import type { SourceIpResolved } from "@dmarc-ledger/events";
import { type SenderKind, senderColumns, sourceNamingSetBy } from "@dmarc-ledger/report-read-models";
import { sql, type Transaction } from "kysely";
import type { AlertsSchema } from "./schema.js";

type Trx = Transaction<AlertsSchema>;

/** A source IP's sender, as aggregate_by_sender names it (docs/api.md). */
export interface SenderName {
  kind: SenderKind;
  sender: string;
}

/**
 * Keeps what names a source IP as the source_ip_name read model does, by the same rule
 * (sourceNamingSetBy): a timeout or an error moves only the AS (which needs no DNS) and a
 * service named without DNS; a definitive answer replaces them all.
 */
export async function recordSourceName(trx: Trx, answer: SourceIpResolved): Promise<void> {
  const { columns } = sourceNamingSetBy(answer);
  const row = {
    ...("service_name" in columns ? { service_name: columns.service_name } : {}),
    ...("source_domain" in columns ? { source_domain: columns.source_domain } : {}),
    ...("asn" in columns ? { asn: columns.asn, asn_organization: columns.asn_organization } : {}),
  };
  await trx
    .insertInto("alert_source_name")
    .values({
      source_ip: answer.ip,
      service_name: null,
      source_domain: "",
      asn: null,
      asn_organization: null,
      ...row,
    })
    .onConflict((oc) =>
      Object.keys(row).length > 0
        ? oc.column("source_ip").doUpdateSet(row)
        : oc.column("source_ip").doNothing(),
    )
    .execute();
}

/**
 * The senders of the IPs the evaluator has a name for (an IP not resolved yet is absent), named
 * by the API's own rule (senderColumns): a service, a base domain, an AS's organisation.
 */
export async function sendersOf(trx: Trx, ips: readonly string[]): Promise<Map<string, SenderName>> {
  const out = new Map<string, SenderName>();
  for (let at = 0; at < ips.length; at += 1000) {
    const { rows } = await sql<{ source_ip: string } & SenderName>`
      select n.source_ip, ${senderColumns("n")} from alert_source_name n
      where n.source_ip = any(${ips.slice(at, at + 1000)}::text[])`.execute(trx);
    for (const row of rows) out.set(row.source_ip, { kind: row.kind, sender: row.sender });
  }
  return out;
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
