import { type Kysely, sql } from "kysely";
import type { ReadModelSchema } from "../schema.js";

export interface OwnedDomain {
  domain: string;
  tenantId: string;
  group: string | null;
}

export async function findDomain(db: Kysely<ReadModelSchema>, domain: string): Promise<OwnedDomain | null> {
  const row = await db
    .selectFrom("domain")
    .select(["domain", "tenant_id", "group_name"])
    .where("domain", "=", domain)
    .executeTakeFirst();
  return row ? { domain: row.domain, tenantId: row.tenant_id, group: row.group_name } : null;
}

export interface DomainRecord {
  Domain: string;
  DomainGroup: string | null;
  Added: string;
  SafeSpfStatus: string | null;
}

/** GET domains: the tenant's domains, alphabetical, with their group and Safe SPF status. */
export async function listDomains(
  db: Kysely<ReadModelSchema>,
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

/**
 * Tenants' domains that hold no claim in their domain tree, oldest first: added before the tree
 * rule (a domain tree has one owner) existed, or between a claim and its catch-up.
 */
export async function listUnclaimedDomains(
  db: Kysely<ReadModelSchema>,
): Promise<{ domain: string; tenantId: string }[]> {
  const rows = await db
    .selectFrom("domain as d")
    .leftJoin("domain_claim as c", (join) =>
      join.onRef("c.domain", "=", "d.domain").onRef("c.tenant_id", "=", "d.tenant_id"),
    )
    .select(["d.domain", "d.tenant_id"])
    .where("c.domain", "is", null)
    .orderBy("d.added_at")
    .orderBy("d.domain")
    .execute();
  return rows.map((row) => ({ domain: row.domain, tenantId: row.tenant_id }));
}
