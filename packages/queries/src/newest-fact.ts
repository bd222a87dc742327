import { type Kysely, sql } from "kysely";
import type { QuerySchema } from "./schema.js";

/**
 * The latest second any list endpoint can count: the latest report row's day (agg_source.t, which
 * every aggregate read model shares), failure report's arrival or TLS report's part (tls_*_fact.t). A period that ends after it
 * holds what the same period ending at it holds, whatever the tenant. Null when nothing is
 * stored. Both read the end of an index.
 */
export async function newestFactTime(db: Kysely<QuerySchema>): Promise<number | null> {
  const { rows } = await sql<{ newest: string | null }>`select greatest(
      (select max(t) from agg_source), (select max(received) from forensic_report),
      (select max(t) from tls_policy_fact), (select max(t) from tls_failure_fact))::text as newest`.execute(
    db,
  );
  return rows[0]?.newest == null ? null : Number(rows[0].newest);
}
