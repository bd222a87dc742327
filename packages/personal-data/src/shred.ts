import { type Kysely, sql } from "kysely";
import type { KeysHandle } from "./data-keys.js";
import { isPeopleScope } from "./people.js";
import type { PersonalDataSchema } from "./schema.js";
import { isSecretScope } from "./service-secrets.js";

/**
 * The key scopes that hold data keys of reports (tenants, domains' own scopes, noTenant): what
 * retention goes through. People's keys and index secrets (people.ts) are not: they live as
 * long as the person's account, whatever the tenant's policy; nor the keys of service secrets
 * (service-secrets.ts), which live as long as what they seal.
 */
export async function keyScopes(handle: KeysHandle): Promise<string[]> {
  const db = handle as Kysely<PersonalDataSchema>;
  const rows = await db.selectFrom("data_key").select("tenant_id").distinct().execute();
  return rows.map((row) => row.tenant_id).filter((scope) => !isPeopleScope(scope) && !isSecretScope(scope));
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
  // After the delete: an answer computed from here on is keyed by the new epoch (shredEpoch).
  if (rows.length > 0) await sql`select nextval('data_key_shred_epoch')`.execute(db);
  return rows
    .map((row) => ({ keyId: row.key_id, month: row.month }))
    .sort((a, b) => a.month.localeCompare(b.month));
}

/**
 * How many times data keys were deleted, as a string: an answer that opened sealed fields is
 * good only as long as this has not moved.
 */
export async function shredEpoch(handle: KeysHandle): Promise<string> {
  const { rows } = await sql<{ epoch: string }>`
    select case when is_called then last_value else 0 end::text as epoch from data_key_shred_epoch`.execute(
    handle as Kysely<PersonalDataSchema>,
  );
  return rows[0]!.epoch;
}
