import type { Kysely } from "kysely";
import type { KeysHandle } from "./data-keys.js";
import type { PersonalDataSchema } from "./schema.js";

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
