import type { CounterFields } from "@dmarc-ledger/report-read-models";
import { type RawBuilder, sql } from "kysely";

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

/** SQL for the counter columns over rollup rows aliased `alias` (DMARC passes summed per row). */
export function counterSelect(alias: string): RawBuilder<unknown> {
  const c = (column: string) => sql.ref(`${alias}.${column}`);
  const dmarc = sql`sum(${c("dmarc_pass")})`;
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
