import type { Kysely } from "kysely";

/**
 * An endpoint paused by the service (WebhookEndpointPaused) and why: its deliveries wait, kept,
 * until it is resumed by hand; the worker skips its queue meanwhile.
 */
export const webhookEndpointPause = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await db.schema
      .alterTable("webhook_endpoint")
      .addColumn("paused_at", "timestamptz")
      .addColumn("paused_reason", "text")
      .execute();
  },
};
