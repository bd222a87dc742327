import { type Kysely, type RawBuilder, sql } from "kysely";
import type { CounterColumns } from "./counter-columns.js";
import { offsetOf, type PageQuery } from "./page.js";
import type { QuerySchema } from "./schema.js";

/**
 * Runs `grouped` (a SELECT with a GROUP BY whose first column is `key`) and returns one page of
 * it, ordered by volume descending then key, with the number of groups over all pages.
 */
export async function groupedPage(
  db: Kysely<QuerySchema>,
  query: PageQuery,
  grouped: RawBuilder<unknown>,
): Promise<{ total: number; rows: (CounterColumns & { key: string })[] }> {
  const { rows } = await sql<CounterColumns & { key: string; total: string }>`
    with grouped as (${grouped})
    select grouped.*, count(*) over () as total from grouped
    order by grouped.volume::numeric desc, grouped.key collate "C" asc
    limit ${query.perPage} offset ${offsetOf(query)}`.execute(db);
  if (rows.length > 0) return { total: Number(rows[0]!.total), rows };
  const counted = await sql<{
    n: string;
  }>`with grouped as (${grouped}) select count(*) as n from grouped`.execute(db);
  return { total: Number(counted.rows[0]?.n ?? 0), rows: [] };
}
