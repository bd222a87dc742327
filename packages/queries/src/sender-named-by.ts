import { senderNameColumns } from "@dmarc-ledger/report-read-models";
import { type Kysely, sql, type Transaction } from "kysely";
import type { QuerySchema } from "./schema.js";

/** What named a sender record: its forward-confirmed name, an authentication domain, or its AS. */
export type NamedBy = "rdns" | "auth_domain" | "asn" | null;

export const namedByOf = (value: string | null | undefined): NamedBy =>
  value === "rdns" || value === "auth_domain" || value === "asn" ? value : null;

const pairKey = (owner: string, sender: string) => `${owner}\u0000${sender}`;

/**
 * Per (domain, sender) of a ranking's page, what named the addresses with the most messages, as
 * they are named now (an address named otherwise since the build no longer counts for the
 * sender). A ranking holds each sender's addresses (sender_ranking_ip), not what named them.
 */
export async function rankedNamedBy(
  db: Kysely<QuerySchema> | Transaction<QuerySchema>,
  buildId: string,
  pairs: readonly { owner: string; sender: string }[],
): Promise<Map<string, NamedBy>> {
  const found = new Map<string, NamedBy>();
  if (pairs.length === 0) return found;
  const { rows } = await sql<{ owner: string; sender: string; value: string }>`
    select distinct on (owner, sender) owner, sender, value from (
      select r.owner, r.sender, ip.named_by as value, sum(r.volume) as n
      from unnest(${pairs.map((p) => p.owner)}::text[], ${pairs.map((p) => p.sender)}::text[]) as k(owner, sender)
      join sender_ranking_ip r on r.build_id = ${buildId}::bigint and r.owner = k.owner and r.sender = k.sender
      left join source_ip_name n on n.source_ip = r.source_ip
      cross join lateral (select ${senderNameColumns("n")}) ip
      where ip.sender = r.sender
      group by 1, 2, 3
    ) v order by owner, sender, n desc, value collate "C"`.execute(db);
  for (const row of rows) found.set(pairKey(row.owner, row.sender), namedByOf(row.value));
  return found;
}

/** The entry of `named` for a record, else what its kind says (a service's evidence unknown: null). */
export function namedByFor(
  named: Map<string, NamedBy>,
  owner: string,
  sender: string,
  kind: string,
): NamedBy {
  const value = named.get(pairKey(owner, sender));
  if (value !== undefined) return value;
  return kind === "base_domain" ? "rdns" : kind === "asn" ? "asn" : null;
}
