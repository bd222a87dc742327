import type { Scope } from "@dmarc-ledger/events";
import type { Kysely } from "kysely";
import type { TenancySchema } from "../schema.js";

export interface KeyHolder {
  keyId: string;
  tenantId: string;
  region: string;
  scopes: Scope[];
}

/** The live key with this hash, or null when unknown or revoked. */
export async function findApiKey(db: Kysely<TenancySchema>, keyHash: string): Promise<KeyHolder | null> {
  const row = await db
    .selectFrom("api_key")
    .select(["key_id", "tenant_id", "region", "scopes"])
    .where("key_hash", "=", keyHash)
    .where("revoked", "=", false)
    .executeTakeFirst();
  if (!row) return null;
  return {
    keyId: row.key_id,
    tenantId: row.tenant_id,
    region: row.region,
    scopes: row.scopes.split(",").filter(Boolean) as Scope[],
  };
}

export async function countTenants(db: Kysely<TenancySchema>): Promise<number> {
  const row = await db
    .selectFrom("tenant")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
