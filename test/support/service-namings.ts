import { senderNameColumns } from "@dmarc-ledger/report-read-models";
import { type Kysely, sql } from "kysely";
import type { TestNaming } from "./independent-senders.js";
import type { unnamedSource } from "./independent-sources.js";

/** How the service named one source: as a sender (aggregate_by_sender) and as a source. */
export interface ServiceNaming {
  sender: TestNaming;
  source: typeof unnamedSource;
}

/**
 * The names the service gave its sources (source_ip_name, read with the queries' own sender
 * rule), for tests whose subject is not naming (retention, say): they take the names as an input
 * and compute everything else from the report files.
 */
export async function serviceNamings<Schema>(db: Kysely<Schema>): Promise<Map<string, ServiceNaming>> {
  const { rows } = await sql<{
    source_ip: string;
    kind: TestNaming["kind"];
    sender: string;
    named_by: string;
    service_name: string | null;
    service_type: string;
    asn: string;
    asn_organization: string;
    country: string;
  }>`select n.source_ip, n.service_name, ${senderNameColumns("n")} from source_ip_name n`.execute(db);
  return new Map(
    rows.map((row) => [
      row.source_ip,
      {
        sender: {
          kind: row.kind,
          sender: row.sender,
          type: row.service_type,
          asn: row.asn,
          organization: row.asn_organization,
          country: row.country,
          namedBy: row.named_by === "" ? null : (row.named_by as TestNaming["namedBy"]),
        },
        source: {
          Service: row.service_name ?? "",
          ServiceType: row.service_type,
          ASN: row.asn,
          ASNOrganization: row.asn_organization,
          Country: row.country,
        },
      },
    ]),
  );
}
