import { type Kysely, sql } from "kysely";
import type { QuerySchema } from "./schema.js";

export interface DomainRecord {
  Domain: string;
  DomainGroup: string | null;
  Added: string;
  SafeSpfStatus: string | null;
}

/** GET domains: the tenant's domains, alphabetical, with their group and Safe SPF status. */
export async function listDomains(
  db: Kysely<QuerySchema>,
  query: { tenantId: string; page: number; perPage: number },
): Promise<{ total: number; records: DomainRecord[] }> {
  const rows = await db
    .selectFrom("domain as d")
    .leftJoin("safe_spf as s", "s.domain", "d.domain")
    .select([
      "d.domain",
      "d.group_name",
      "s.status",
      sql<string>`to_char(d.added_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS')`.as("added"),
      sql<string>`count(*) over ()`.as("total"),
    ])
    .where("d.tenant_id", "=", query.tenantId)
    .orderBy("d.domain")
    .limit(query.perPage)
    .offset((query.page - 1) * query.perPage)
    .execute();
  const total =
    rows.length > 0
      ? Number(rows[0]!.total)
      : Number(
          (
            await db
              .selectFrom("domain")
              .select((eb) => eb.fn.countAll<string>().as("n"))
              .where("tenant_id", "=", query.tenantId)
              .executeTakeFirstOrThrow()
          ).n,
        );
  return {
    total,
    records: rows.map((row) => ({
      Domain: row.domain,
      DomainGroup: row.group_name,
      Added: row.added,
      SafeSpfStatus: row.status ?? null,
    })),
  };
}
