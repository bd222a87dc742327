import { type Kysely, sql } from "kysely";

/**
 * Each endpoint's own health and queue position (delivery-worker.ts): when it last succeeded and
 * failed (as a category), since when it fails, and until when its queue waits after a failure, so
 * that a failing endpoint costs one attempt per backoff, not one per pending delivery, and never
 * holds another endpoint's deliveries.
 */
export const webhookEndpointHealth = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await db.schema
      .createTable("webhook_endpoint_health")
      .addColumn("endpoint_id", "text", (c) => c.primaryKey())
      .addColumn("last_success_at", "timestamptz")
      .addColumn("last_failure_at", "timestamptz")
      .addColumn("last_failure", "text")
      .addColumn("failing_since", "timestamptz")
      .addColumn("failures", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("retry_at", "timestamptz")
      .execute();
    // The heads of the endpoints' queues: the oldest due delivery of each.
    await sql`create index webhook_delivery_endpoint_due on webhook_delivery (endpoint_id, next_attempt_at)
      where status = 'pending'`.execute(db);
  },
};
