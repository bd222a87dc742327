import type { Projection } from "@dmarc-ledger/projection-engine";
import { sql } from "kysely";
import { addToSums, type CounterSums, emptySums } from "../counters.js";
import type { ReportSchema } from "../schema.js";
import { takeDayChangeNumber } from "../tenant-day-totals.js";
import { rowParts } from "./report-parts.js";

const DAY = 86_400;

/** The day a part of a report counts on: the UTC day of its `t`, as agg_domain's `t` is. */
const dayOf = (t: number) => Math.floor(t / DAY);

interface DaySums extends CounterSums {
  none: number;
  quarantine: number;
  reject: number;
}

/** Keys per statement: bounds the statement's size (each column goes as one array). */
const keysPerStatement = 20_000;

/**
 * Counter and disposition sums per (policy domain, UTC day): the daily series. The day split is
 * rowParts', the one agg_domain and the other groupings use, so a report spanning several days
 * lands on the same days here as there. Dispositions are the three words of the spec, compared
 * lower-case; any other word ("pass" in an old draft) is in none of the three.
 */
export const aggregateByDateProjection: Projection<ReportSchema> = {
  name: "aggregate_by_date",
  // The tenants' day totals are kept from agg_domain_day (tenant-day-totals.ts): a rebuild starts
  // them afresh, with the change numbers that say which days changed since.
  tables: ["agg_domain_day", "agg_domain_day_change", "tenant_day_total", "tenant_day_total_build"],
  handles: new Set(["AggregateReportReceived"]),
  async apply(trx, events) {
    const sums = new Map<string, { domain: string; day: number; sums: DaySums }>();
    for (const part of rowParts(events)) {
      const day = dayOf(part.t);
      const id = `${part.domain}\u0000${day}`;
      let entry = sums.get(id);
      if (!entry) {
        entry = { domain: part.domain, day, sums: { ...emptySums(), none: 0, quarantine: 0, reject: 0 } };
        sums.set(id, entry);
      }
      addToSums(entry.sums, part.verdict, part.count);
      const disposition = part.row.disposition.trim().toLowerCase();
      if (disposition === "none" || disposition === "quarantine" || disposition === "reject") {
        entry.sums[disposition] += part.count;
      }
    }
    const entries = [...sums.values()];
    if (entries.length === 0) return;
    const seq = await takeDayChangeNumber(trx);
    for (let start = 0; start < entries.length; start += keysPerStatement) {
      const slice = entries.slice(start, start + keysPerStatement);
      const column = (read: (sums: DaySums) => number) =>
        sql`${slice.map((entry) => read(entry.sums))}::bigint[]`;
      await sql`insert into agg_domain_day (domain, day, volume, dmarc_pass, unaligned_arc_pass,
          dkim_aligned, spf_aligned, dkim_pass, spf_pass,
          disposition_none, disposition_quarantine, disposition_reject, changed_seq)
        select *, ${seq}::bigint from unnest(${slice.map((entry) => entry.domain)}::text[],
          ${slice.map((entry) => entry.day)}::integer[],
          ${column((s) => s.volume)}, ${column((s) => s.dmarcPass)}, ${column((s) => s.unalignedArcPass)},
          ${column((s) => s.dkimAligned)}, ${column((s) => s.spfAligned)}, ${column((s) => s.dkimPass)},
          ${column((s) => s.spfPass)}, ${column((s) => s.none)}, ${column((s) => s.quarantine)},
          ${column((s) => s.reject)})
        on conflict (domain, day) do update set
          volume = agg_domain_day.volume + excluded.volume,
          dmarc_pass = agg_domain_day.dmarc_pass + excluded.dmarc_pass,
          unaligned_arc_pass = agg_domain_day.unaligned_arc_pass + excluded.unaligned_arc_pass,
          dkim_aligned = agg_domain_day.dkim_aligned + excluded.dkim_aligned,
          spf_aligned = agg_domain_day.spf_aligned + excluded.spf_aligned,
          dkim_pass = agg_domain_day.dkim_pass + excluded.dkim_pass,
          spf_pass = agg_domain_day.spf_pass + excluded.spf_pass,
          disposition_none = agg_domain_day.disposition_none + excluded.disposition_none,
          disposition_quarantine = agg_domain_day.disposition_quarantine + excluded.disposition_quarantine,
          disposition_reject = agg_domain_day.disposition_reject + excluded.disposition_reject,
          changed_seq = excluded.changed_seq`.execute(trx);
    }
  },
};
