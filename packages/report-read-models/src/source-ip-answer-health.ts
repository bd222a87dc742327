import { type Kysely, sql } from "kysely";
import type { ReportSchema } from "./schema.js";

/** How reverse DNS of report sources went lately, from the answers' outcomes. */
export interface ReverseDnsHealth {
  /**
   * `answering`: some lookup got an answer in the window; `not_answering`: lookups were made and
   * every one timed out or failed (the resolvers do not answer; sources keep their other names);
   * `idle`: no lookup in the window (reverse DNS off, or nothing to ask).
   */
  status: "answering" | "not_answering" | "idle";
  /** Lookups answered (a name, none, or NXDOMAIN) in the window. */
  answered: number;
  /** Lookups that timed out or failed in the window. */
  failed: number;
  windowSeconds: number;
}

const failedOutcomes = ["timeout", "error"];

/** Reverse DNS's health over the last `windowSeconds` (the latest attempt per source counts). */
export async function reverseDnsHealth(
  db: Kysely<Pick<ReportSchema, "source_ip_name">>,
  now = new Date(),
  windowSeconds = 3_600,
): Promise<ReverseDnsHealth> {
  const since = new Date(now.getTime() - windowSeconds * 1000);
  const { rows } = await sql<{ failed: string; answered: string }>`
    select count(*) filter (where outcome in (${sql.join(failedOutcomes)}))::text as failed,
      count(*) filter (where outcome not in (${sql.join(failedOutcomes)}, 'not_asked'))::text as answered
    from source_ip_name where resolved_at >= ${since}`.execute(db);
  const answered = Number(rows[0]?.answered ?? 0);
  const failed = Number(rows[0]?.failed ?? 0);
  const status = answered > 0 ? "answering" : failed > 0 ? "not_answering" : "idle";
  return { status, answered, failed, windowSeconds };
}

/** Sources by the outcome of their latest answer (not_asked: named without DNS so far). */
export async function sourceIpOutcomeCounts(
  db: Kysely<Pick<ReportSchema, "source_ip_name">>,
): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom("source_ip_name")
    .select(["outcome", (eb) => eb.fn.countAll<string>().as("n")])
    .groupBy("outcome")
    .execute();
  return new Map(rows.map((row) => [row.outcome, Number(row.n)]));
}
