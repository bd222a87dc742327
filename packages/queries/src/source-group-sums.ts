import type { CounterFields } from "@dmarc-ledger/report-read-models";
import { sql } from "kysely";

/**
 * One (domain, source IP, organisation) group of a period with its sums, as both ways of paging
 * the by-source endpoints return it (as text: sums exceed JavaScript's integers). The columns of
 * sourceFactSums (packages/report-read-models), under the same names.
 */
export interface SourceGroupSums {
  domain: string;
  source_ip: string;
  organization: string;
  volume: string;
  dmarc_pass: string;
  unaligned_arc_pass: string;
  dkim_aligned: string;
  spf_aligned: string;
  dkim_pass: string;
  spf_pass: string;
  /** How many agg_source rows were summed. */
  facts: string;
}

const summedColumns = [
  "volume",
  "dmarc_pass",
  "unaligned_arc_pass",
  "dkim_aligned",
  "spf_aligned",
  "dkim_pass",
  "spf_pass",
  "facts",
];
const keyColumns = ["domain", "source_ip", "organization"];

/** SourceGroupSums' columns of a relation aliased `alias`, in SourceGroupSums' order, as they are. */
export const sourceSumColumns = (alias: string) =>
  sql.join(
    [...keyColumns, ...summedColumns].map((column) => sql.ref(`${alias}.${column}`)),
    sql`, `,
  );

/** SourceGroupSums' columns of a relation aliased `alias`, the sums as text. */
export const sourceSumsAsText = (alias: string) =>
  sql.join(
    [
      ...keyColumns.map((column) => sql.ref(`${alias}.${column}`)),
      ...summedColumns.map((column) => sql`${sql.ref(`${alias}.${column}`)}::text as ${sql.ref(column)}`),
    ],
    sql`, `,
  );

/** The API's order of source records: volume descending, then the key (bytewise). */
export const sourceOrder = (alias: string, direction: "forward" | "backward") => {
  const key = (column: string) => sql`${sql.ref(`${alias}.${column}`)} collate "C"`;
  return direction === "forward"
    ? sql`${sql.ref(`${alias}.volume`)} desc, ${key("domain")}, ${key("source_ip")}, ${key("organization")}`
    : sql`${sql.ref(`${alias}.volume`)} asc, ${key("domain")} desc, ${key("source_ip")} desc, ${key("organization")} desc`;
};

/** The contract's counters of a group; the "unaligned" ones follow from the sums. */
export function sourceCounters(row: SourceGroupSums, unalignedOnly: boolean): CounterFields {
  const volume = BigInt(row.volume);
  const dmarc = BigInt(row.dmarc_pass);
  return {
    Volume: row.volume,
    DMARC: row.dmarc_pass,
    DMARCUnaligned: String(volume - dmarc),
    DMARCUnalignedARCPass: unalignedOnly ? null : row.unaligned_arc_pass,
    DKIMAligned: row.dkim_aligned,
    DKIM: row.dkim_pass,
    DKIMFailed: String(volume - BigInt(row.dkim_pass)),
    SPFAligned: row.spf_aligned,
    SPF: row.spf_pass,
    SPFFailed: String(volume - BigInt(row.spf_pass)),
  };
}
