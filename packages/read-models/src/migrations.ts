import type { MigrationSet } from "@dmarc-ledger/db";
import { type Kysely, sql } from "kysely";

// Migrations take Kysely<any>: they run before the schema they create exists.
// biome-ignore lint/suspicious/noExplicitAny: see above
type AnyDb = Kysely<any>;

export const readModelMigrations: MigrationSet = {
  name: "read_models",
  migrations: {
    "001_skeleton": {
      up: async (db: AnyDb) => {
        await db.schema
          .createTable("projection_checkpoint")
          .addColumn("projection", "text", (c) => c.primaryKey())
          .addColumn("position", "numeric", (c) => c.notNull())
          .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
          .execute();
        await db.schema
          .createTable("tenant")
          .addColumn("tenant_id", "text", (c) => c.primaryKey())
          .addColumn("name", "text", (c) => c.notNull())
          .addColumn("region", "text", (c) => c.notNull())
          .addColumn("created_at", "timestamptz", (c) => c.notNull())
          .execute();
        await db.schema
          .createTable("api_key")
          .addColumn("key_id", "text", (c) => c.primaryKey())
          .addColumn("tenant_id", "text", (c) => c.notNull())
          .addColumn("key_hash", "text", (c) => c.notNull().unique())
          .addColumn("key_prefix", "text", (c) => c.notNull())
          .addColumn("scopes", "text", (c) => c.notNull())
          .addColumn("region", "text", (c) => c.notNull())
          .addColumn("revoked", "boolean", (c) => c.notNull().defaultTo(false))
          .execute();
        await db.schema
          .createTable("domain")
          .addColumn("domain", "text", (c) => c.primaryKey())
          .addColumn("tenant_id", "text", (c) => c.notNull())
          .addColumn("group_name", "text")
          .addColumn("added_at", "timestamptz", (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex("domain_by_tenant")
          .on("domain")
          .columns(["tenant_id", "domain"])
          .execute();
        await db.schema
          .createTable("agg_domain")
          .addColumn("domain", "text", (c) => c.notNull())
          .addColumn("t", "bigint", (c) => c.notNull())
          .addColumn("volume", "bigint", (c) => c.notNull())
          .addColumn("dmarc_pass", "bigint", (c) => c.notNull())
          .addColumn("unaligned_arc_pass", "bigint", (c) => c.notNull())
          .addColumn("dkim_aligned", "bigint", (c) => c.notNull())
          .addColumn("spf_aligned", "bigint", (c) => c.notNull())
          .addColumn("dkim_pass", "bigint", (c) => c.notNull())
          .addColumn("spf_pass", "bigint", (c) => c.notNull())
          .addPrimaryKeyConstraint("agg_domain_pk", ["domain", "t"])
          .execute();
        await db.schema.createIndex("agg_domain_by_t").on("agg_domain").columns(["t", "domain"]).execute();
      },
    },
  },
};
