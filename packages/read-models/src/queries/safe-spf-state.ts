import { type Kysely, sql } from "kysely";
import type { ReadModelSchema } from "../schema.js";

export interface SafeSpfState {
  domain: string;
  original: string;
  status: string;
  records: { name: string; value: string }[];
  lookupsBefore: number | null;
  lookupsAfter: number | null;
  warnings: string[];
  lastComputed: string | null;
  lastError: string | null;
  retrying: boolean;
}

/** GET safe_spf: the Safe SPF state of one of the tenant's domains; null when there is none. */
export async function safeSpfState(
  db: Kysely<ReadModelSchema>,
  tenantId: string,
  domain: string,
): Promise<SafeSpfState | null> {
  const row = await db
    .selectFrom("safe_spf")
    .select([
      "domain",
      "original",
      "status",
      "records",
      "lookups_before",
      "lookups_after",
      "warnings",
      sql<string | null>`to_char(last_computed at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS')`.as(
        "last_computed",
      ),
      "last_error",
      "retrying",
    ])
    .where("domain", "=", domain)
    .where("tenant_id", "=", tenantId)
    .executeTakeFirst();
  if (!row) return null;
  return {
    domain: row.domain,
    original: row.original,
    status: row.status,
    records: JSON.parse(row.records),
    lookupsBefore: row.lookups_before,
    lookupsAfter: row.lookups_after,
    warnings: JSON.parse(row.warnings),
    lastComputed: row.last_computed,
    lastError: row.last_error,
    retrying: row.retrying,
  };
}
