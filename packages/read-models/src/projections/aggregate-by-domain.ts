import { spreadOverDays } from "@dmarc-ledger/dmarc-reports";
import { sql } from "kysely";
import { addToSums, type CounterSums, emptySums, judgeRow } from "../counters.js";
import type { Projection } from "./projection.js";

// 9 parameters a row; PostgreSQL allows 65,535 parameters a statement.
const rowsPerStatement = 5000;

/**
 * Counter sums per (policy domain, day-normalised begin). A batch is summed in memory first, so
 * that a batch of many reports costs one upsert per distinct (domain, begin).
 */
export const aggregateByDomainProjection: Projection = {
  name: "aggregate_by_domain",
  tables: ["agg_domain"],
  handles: new Set(["AggregateReportReceived"]),
  async apply(trx, events) {
    const sumsByKey = new Map<string, { domain: string; t: number; sums: CounterSums }>();
    for (const event of events) {
      if (event.type !== "AggregateReportReceived") continue;
      const report = event.data;
      const domain = report.policy.domain.toLowerCase();
      for (const row of report.rows) {
        const verdict = judgeRow(row);
        for (const part of spreadOverDays(report.begin, report.end, row.count)) {
          if (part.count === 0) continue;
          const key = `${domain}\u0000${part.t}`;
          let entry = sumsByKey.get(key);
          if (!entry) {
            entry = { domain, t: part.t, sums: emptySums() };
            sumsByKey.set(key, entry);
          }
          addToSums(entry.sums, verdict, part.count);
        }
      }
    }
    const values = [...sumsByKey.values()].map(({ domain, t, sums }) => ({
      domain,
      t,
      volume: sums.volume,
      dmarc_pass: sums.dmarcPass,
      unaligned_arc_pass: sums.unalignedArcPass,
      dkim_aligned: sums.dkimAligned,
      spf_aligned: sums.spfAligned,
      dkim_pass: sums.dkimPass,
      spf_pass: sums.spfPass,
    }));
    for (let i = 0; i < values.length; i += rowsPerStatement) {
      await trx
        .insertInto("agg_domain")
        .values(values.slice(i, i + rowsPerStatement))
        .onConflict((oc) =>
          oc.columns(["domain", "t"]).doUpdateSet({
            volume: sql`agg_domain.volume + excluded.volume`,
            dmarc_pass: sql`agg_domain.dmarc_pass + excluded.dmarc_pass`,
            unaligned_arc_pass: sql`agg_domain.unaligned_arc_pass + excluded.unaligned_arc_pass`,
            dkim_aligned: sql`agg_domain.dkim_aligned + excluded.dkim_aligned`,
            spf_aligned: sql`agg_domain.spf_aligned + excluded.spf_aligned`,
            dkim_pass: sql`agg_domain.dkim_pass + excluded.dkim_pass`,
            spf_pass: sql`agg_domain.spf_pass + excluded.spf_pass`,
          }),
        )
        .execute();
    }
  },
};
