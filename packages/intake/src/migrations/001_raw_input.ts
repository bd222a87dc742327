import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
type AnyDb = Kysely<any>;

/**
 * The raw archive: every input any channel received, once per distinct content (SHA-256), kept
 * compressed, with what became of it. `raw_input_receipt` keeps each arrival (channel, source,
 * time), so an input that came by mail and again by upload shows both.
 */
export const rawInputMigration = {
  up: async (db: AnyDb) => {
    await db.schema
      .createTable("raw_input")
      .addColumn("sha256", "text", (c) => c.primaryKey())
      .addColumn("size", "bigint", (c) => c.notNull())
      // "gzip"; null when the input was larger than the archive keeps whole (content is null too).
      .addColumn("compression", "text")
      .addColumn("content", "bytea")
      .addColumn("channel", "text", (c) => c.notNull())
      .addColumn("source", "text", (c) => c.notNull())
      // received (archived, not yet ingested), stored, duplicate, rejected
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("code", "text")
      .addColumn("reason", "text")
      // JSON text: the items the input held (kind, identity, domain, rows, messages, status).
      .addColumn("items", "text", (c) => c.notNull().defaultTo("[]"))
      .addColumn("times_received", "integer", (c) => c.notNull().defaultTo(1))
      .addColumn("first_seen", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn("last_seen", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn("processed_at", "timestamptz")
      .execute();
    await db.schema
      .createIndex("raw_input_by_status")
      .on("raw_input")
      .columns(["status", "last_seen"])
      .execute();
    await db.schema
      .createTable("raw_input_receipt")
      .addColumn("id", "bigserial", (c) => c.primaryKey())
      .addColumn("sha256", "text", (c) => c.notNull().references("raw_input.sha256"))
      .addColumn("channel", "text", (c) => c.notNull())
      .addColumn("source", "text", (c) => c.notNull())
      .addColumn("received_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    await db.schema
      .createIndex("raw_input_receipt_by_sha256")
      .on("raw_input_receipt")
      .columns(["sha256", "received_at"])
      .execute();
  },
};
