import type { Kysely } from "kysely";

export const projectionLease = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await db.schema
      .createTable("projection_lease")
      .addColumn("name", "text", (c) => c.primaryKey())
      .addColumn("owner", "text", (c) => c.notNull())
      // Grows by one at every change of owner: a batch carries the token it was given, so that
      // an owner that lost the lease (paused past its expiry) cannot write with it.
      .addColumn("token", "bigint", (c) => c.notNull())
      .addColumn("expires_at", "timestamptz", (c) => c.notNull())
      .execute();
  },
};
