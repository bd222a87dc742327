import type { Kysely } from "kysely";

/**
 * Who acknowledged an alert and when (AlertAcknowledged): GET alerts lists the open ones apart
 * from those seen to.
 */
export const alertAcknowledged = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await db.schema
      .alterTable("alert")
      .addColumn("acknowledged_at", "timestamptz")
      .addColumn("acknowledged_by", "text")
      .execute();
  },
};
