import type { Kysely } from "kysely";

export const safeSpfMinTtl = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    // The shortest TTL a record was built from: when it is due again (projected from events).
    await db.schema.alterTable("safe_spf").addColumn("min_ttl", "integer").execute();
  },
};
