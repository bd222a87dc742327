import { type DataKeys, SecretBox } from "@dmarc-ledger/personal-data";
import type { Kysely } from "kysely";
import type { AlertsSchema } from "./schema.js";

/** The box webhook signing secrets are sealed in (scope `secret:webhooks`), each bound to its endpoint. */
export const webhookSecretBox = (keys: DataKeys) => new SecretBox(keys, "webhooks");

/** Seals an endpoint's signing secret and keeps it (webhook_secret). */
export async function storeWebhookSecret(
  db: Kysely<AlertsSchema>,
  keys: DataKeys,
  endpointId: string,
  secret: string,
): Promise<void> {
  const sealed = await webhookSecretBox(keys).seal(db, endpointId, secret);
  await db.insertInto("webhook_secret").values({ endpoint_id: endpointId, secret: sealed }).execute();
}

/** An endpoint's signing secret, opened; undefined when it has none. */
export async function webhookSecret(
  db: Kysely<AlertsSchema>,
  keys: DataKeys,
  endpointId: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom("webhook_secret")
    .select("secret")
    .where("endpoint_id", "=", endpointId)
    .executeTakeFirst();
  return row ? webhookSecretBox(keys).open(db, endpointId, row.secret) : undefined;
}

/**
 * Seals the secrets kept in clear before secrets were sealed (at start, in every process: a row
 * is rewritten only while it is still in clear). Returns how many it sealed.
 */
export async function sealClearWebhookSecrets(db: Kysely<AlertsSchema>, keys: DataKeys): Promise<number> {
  const box = webhookSecretBox(keys);
  const rows = await db
    .selectFrom("webhook_secret")
    .select(["endpoint_id", "secret"])
    .where("secret", "not like", "sealed:%")
    .execute();
  for (const row of rows) {
    await db
      .updateTable("webhook_secret")
      .set({ secret: await box.seal(db, row.endpoint_id, row.secret) })
      .where("endpoint_id", "=", row.endpoint_id)
      .where("secret", "=", row.secret)
      .execute();
  }
  return rows.length;
}
