import type { AggregateRowRecord } from "@dmarc-ledger/events";
import type { Projection } from "@dmarc-ledger/projection-engine";
import { sql, type Transaction } from "kysely";
import type { ReportSchema } from "../schema.js";
import { type KeyColumn, SumsByKey } from "./add-sums.js";
import { rowParts } from "./report-parts.js";
import { takeSourceChangeNumber } from "./source-change-counter.js";

const isPass = (result: string) => result.toLowerCase() === "pass";

/** The row's SPF domain: its first SPF auth result's (rows rarely carry more than one). */
export function spfDomainOf(row: AggregateRowRecord): string {
  return (row.spf[0]?.domain ?? "").toLowerCase();
}

/** The row's DKIM domain: the first passing signature's, else the first signature's. */
export function dkimDomainOf(row: AggregateRowRecord): string {
  return ((row.dkim.find((result) => isPass(result.result)) ?? row.dkim[0])?.domain ?? "").toLowerCase();
}

/** agg_source's key, in the order SumsByKey.add receives its values. */
const sourceKeyColumns: KeyColumn[] = [
  { name: "domain", type: "text" },
  { name: "t", type: "bigint" },
  { name: "source_ip", type: "text" },
  { name: "organization", type: "text" },
  { name: "disposition", type: "text" },
  { name: "arc", type: "text" },
  { name: "spf_domain", type: "text" },
  { name: "dkim_domain", type: "text" },
  { name: "dmarc_pass", type: "boolean" },
];

/**
 * The facts behind aggregate_by_source and aggregate_by_unaligned_source: sums per source and
 * per the values those records pick the most frequent of.
 */
export const aggregateBySourceProjection: Projection<ReportSchema> = {
  name: "aggregate_by_source",
  // The rankings are built from agg_source (source-rankings/): a rebuild starts them afresh.
  // agg_source_change numbers the batches that wrote agg_source (source-change-counter.ts);
  // agg_source_count counts its rows per domain and day.
  tables: [
    "agg_source",
    "agg_source_change",
    "agg_source_count",
    "source_ranking",
    "source_ranking_build",
    "source_ranking_upkeep",
  ],
  handles: new Set(["AggregateReportReceived"]),
  async apply(trx, events) {
    const sums = new SumsByKey("agg_source", sourceKeyColumns, false, true);
    for (const part of rowParts(events)) {
      sums.add(
        [
          part.domain,
          part.t,
          part.row.sourceIp,
          part.report.organization,
          part.row.disposition.toLowerCase(),
          part.verdict.arc ?? "",
          spfDomainOf(part.row),
          dkimDomainOf(part.row),
          part.verdict.dmarcPass,
        ],
        part.verdict,
        part.count,
      );
    }
    if (sums.size === 0) return;
    await sums.write(trx, { column: "changed_seq", value: await takeSourceChangeNumber(trx) });
    await countFacts(trx, sums);
  },
};

/**
 * Adds the batch's new agg_source rows (one per key) to agg_source_count, per domain and day: the
 * upkeep reads there whether a bucket has facts enough for a ranking.
 */
async function countFacts(trx: Transaction<ReportSchema>, sums: SumsByKey): Promise<void> {
  const counts = new Map<string, { domain: string; t: number; facts: number; unaligned: number }>();
  for (const key of sums.keys()) {
    const id = `${key[0]}\u0000${key[1]}`;
    const entry = counts.get(id) ?? { domain: String(key[0]), t: Number(key[1]), facts: 0, unaligned: 0 };
    entry.facts++;
    if (key[8] === false) entry.unaligned++;
    counts.set(id, entry);
  }
  const rows = [...counts.values()];
  await sql`insert into agg_source_count (domain, t, facts, unaligned_facts)
    select * from unnest(${rows.map((r) => r.domain)}::text[], ${rows.map((r) => r.t)}::bigint[],
      ${rows.map((r) => r.facts)}::bigint[], ${rows.map((r) => r.unaligned)}::bigint[])
    on conflict (domain, t) do update set facts = agg_source_count.facts + excluded.facts,
      unaligned_facts = agg_source_count.unaligned_facts + excluded.unaligned_facts`.execute(trx);
}
