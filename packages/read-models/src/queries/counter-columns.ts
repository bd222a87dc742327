import { type RawBuilder, sql } from "kysely";
import type { CounterFields } from "../counters.js";

/** The summed counter columns every aggregate query selects, under these names. */
export interface CounterColumns {
  volume: string;
  dmarc: string;
  dmarc_unaligned: string;
  dmarc_unaligned_arc_pass: string | null;
  dkim_aligned: string;
  dkim: string;
  dkim_failed: string;
  spf_aligned: string;
  spf: string;
  spf_failed: string;
}

/**
 * SQL for the counter columns over rows aliased `alias`. `dmarcPass` is how the rows say they
 * passed DMARC: a summed column (rollups) or a boolean key column (source facts).
 */
export function counterSelect(alias: string, dmarcPass: "summed" | "flag"): RawBuilder<unknown> {
  const c = (column: string) => sql.ref(`${alias}.${column}`);
  const dmarc =
    dmarcPass === "summed"
      ? sql`sum(${c("dmarc_pass")})`
      : sql`coalesce(sum(${c("volume")}) filter (where ${c("dmarc_pass")}), 0)`;
  return sql`sum(${c("volume")})::text as volume,
    (${dmarc})::text as dmarc,
    (sum(${c("volume")}) - ${dmarc})::text as dmarc_unaligned,
    sum(${c("unaligned_arc_pass")})::text as dmarc_unaligned_arc_pass,
    sum(${c("dkim_aligned")})::text as dkim_aligned,
    sum(${c("dkim_pass")})::text as dkim,
    (sum(${c("volume")}) - sum(${c("dkim_pass")}))::text as dkim_failed,
    sum(${c("spf_aligned")})::text as spf_aligned,
    sum(${c("spf_pass")})::text as spf,
    (sum(${c("volume")}) - sum(${c("spf_pass")}))::text as spf_failed`;
}

export function toCounterFields(row: CounterColumns, arcPassIsNull = false): CounterFields {
  return {
    Volume: row.volume,
    DMARC: row.dmarc,
    DMARCUnaligned: row.dmarc_unaligned,
    DMARCUnalignedARCPass: arcPassIsNull ? null : row.dmarc_unaligned_arc_pass,
    DKIMAligned: row.dkim_aligned,
    DKIM: row.dkim,
    DKIMFailed: row.dkim_failed,
    SPFAligned: row.spf_aligned,
    SPF: row.spf,
    SPFFailed: row.spf_failed,
  };
}
