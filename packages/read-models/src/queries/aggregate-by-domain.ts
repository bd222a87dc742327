import { type Kysely, sql } from "kysely";
import type { CounterFields } from "../counters.js";
import type { ReadModelSchema } from "../schema.js";
import { offsetOf, type Page, type PageQuery } from "./page.js";
import { belongsToTenant } from "./tenant-domain-filter.js";

export interface AggregateByDomainRecord extends CounterFields {
  Domain: string;
}

/** GET aggregate_by_domain: one record per policy domain, by Volume descending then Domain. */
export async function aggregateByDomain(
  db: Kysely<ReadModelSchema>,
  query: PageQuery,
): Promise<Page<AggregateByDomainRecord>> {
  const grouped = db
    .selectFrom("agg_domain as a")
    .where("a.t", ">=", query.start)
    .where("a.t", "<=", query.end)
    .where(belongsToTenant(query.tenantId, "a.domain"))
    .groupBy("a.domain");

  const rows = await grouped
    .select([
      "a.domain",
      sql<string>`sum(a.volume)::text`.as("volume"),
      sql<string>`sum(a.dmarc_pass)::text`.as("dmarc"),
      sql<string>`(sum(a.volume) - sum(a.dmarc_pass))::text`.as("dmarc_unaligned"),
      sql<string>`sum(a.unaligned_arc_pass)::text`.as("dmarc_unaligned_arc_pass"),
      sql<string>`sum(a.dkim_aligned)::text`.as("dkim_aligned"),
      sql<string>`sum(a.dkim_pass)::text`.as("dkim"),
      sql<string>`(sum(a.volume) - sum(a.dkim_pass))::text`.as("dkim_failed"),
      sql<string>`sum(a.spf_aligned)::text`.as("spf_aligned"),
      sql<string>`sum(a.spf_pass)::text`.as("spf"),
      sql<string>`(sum(a.volume) - sum(a.spf_pass))::text`.as("spf_failed"),
      sql<string>`count(*) over ()`.as("total"),
    ])
    .orderBy(sql`sum(a.volume)`, "desc")
    .orderBy("a.domain", "asc")
    .limit(query.perPage)
    .offset(offsetOf(query))
    .execute();

  const total =
    rows.length > 0
      ? Number(rows[0]!.total)
      : Number(
          (
            await db
              .selectFrom(grouped.select("a.domain").as("g"))
              .select(sql<string>`count(*)`.as("n"))
              .executeTakeFirstOrThrow()
          ).n,
        );

  return {
    total,
    records: rows.map((row) => ({
      Domain: row.domain,
      Volume: row.volume,
      DMARC: row.dmarc,
      DMARCUnaligned: row.dmarc_unaligned,
      DMARCUnalignedARCPass: row.dmarc_unaligned_arc_pass,
      DKIMAligned: row.dkim_aligned,
      DKIM: row.dkim,
      DKIMFailed: row.dkim_failed,
      SPFAligned: row.spf_aligned,
      SPF: row.spf,
      SPFFailed: row.spf_failed,
    })),
  };
}
