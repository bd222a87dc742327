import type { Kysely } from "kysely";
import type { KeysHandle } from "./data-keys.js";
import type { PersonalDataSchema } from "./schema.js";

/** The key scopes that hold data keys, every one (tenants, domains' own scopes, noTenant). */
export async function keyScopes(handle: KeysHandle): Promise<string[]> {
  const db = handle as Kysely<PersonalDataSchema>;
  const rows = await db.selectFrom("data_key").select("tenant_id").distinct().execute();
  return rows.map((row) => row.tenant_id);
}

/**
 * Deletes a tenant's data keys (all of them, or those of the months before `beforeMonth`,
 * `YYYY-MM`): what they sealed, in the events and wherever it was copied, cannot be read again.
 * Returns the keys deleted, with their months.
 */
export async function shredDataKeys(
  handle: KeysHandle,
  tenantId: string,
  beforeMonth?: string,
): Promise<{ keyId: string; month: string }[]> {
  const db = handle as Kysely<PersonalDataSchema>;
  let query = db.deleteFrom("data_key").where("tenant_id", "=", tenantId);
  if (beforeMonth !== undefined) query = query.where("month", "<", beforeMonth);
  const rows = await query.returning(["key_id", "month"]).execute();
  return rows
    .map((row) => ({ keyId: row.key_id, month: row.month }))
    .sort((a, b) => a.month.localeCompare(b.month));
}
