import { type Kysely, sql } from "kysely";
import { summedCounterColumns as counters } from "./summed-counter-columns.js";

export const sourceRankings = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    // Which projection batch last changed a fact: a ranking built before it must not be
    // trusted for that fact's group. Rows written later land later in the table, so a BRIN
    // index finds them; it is lossy but never misses one, and it costs the projection far
    // less than a B-tree (64k rows/s against 51k at 500k rows).
    await sql`create sequence agg_source_change_seq`.execute(db);
    await sql`alter table agg_source add column changed_seq bigint not null default 0`.execute(db);
    await sql`create index agg_source_by_change on agg_source using brin (changed_seq)
      with (autosummarize = on)`.execute(db);
    // Group first: the picks and the exact recomputation of a few groups read one group's facts
    // at a time; period scans have agg_source_by_t. With the volume included, the picks of a
    // page are read from the index alone, where a group's facts lie together (in the table
    // they are scattered over the days they arrived on).
    await sql`alter table agg_source drop constraint agg_source_pk`.execute(db);
    await sql`alter table agg_source add constraint agg_source_pk primary key
      (domain, source_ip, organization, t, disposition, arc, spf_domain, dkim_domain, dmarc_pass)
      include (volume)`.execute(db);
    await sql`create sequence source_ranking_id_seq`.execute(db);
    await db.schema
      .createTable("source_ranking_build")
      .addColumn("ranking_id", "bigint", (c) => c.primaryKey())
      .addColumn("tenant_id", "text", (c) => c.notNull())
      .addColumn("scope", "text", (c) => c.notNull())
      .addColumn("bucket_start", "bigint", (c) => c.notNull())
      .addColumn("bucket_end", "bigint", (c) => c.notNull())
      .addColumn("built_seq", "bigint", (c) => c.notNull())
      .addColumn("domain_count", "integer", (c) => c.notNull())
      .addColumn("group_count", "bigint", (c) => c.notNull())
      .addColumn("built_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    await db.schema
      .createIndex("source_ranking_build_by_tenant")
      .on("source_ranking_build")
      .columns(["tenant_id", "scope", "bucket_start"])
      .execute();
    await counters(
      db.schema
        .createTable("source_ranking")
        .addColumn("ranking_id", "bigint", (c) => c.notNull())
        .addColumn("domain", "text", (c) => c.notNull())
        .addColumn("source_ip", "text", (c) => c.notNull())
        .addColumn("organization", "text", (c) => c.notNull())
        .addColumn("dmarc_pass", "bigint", (c) => c.notNull())
        .addColumn("facts", "bigint", (c) => c.notNull()),
    )
      .addPrimaryKeyConstraint("source_ranking_pk", ["ranking_id", "domain", "source_ip", "organization"])
      .execute();
    // The API's order, so that a page is a walk along this index (backwards for the last pages).
    await sql`create index source_ranking_by_volume on source_ranking
      (ranking_id, volume desc, domain collate "C", source_ip collate "C", organization collate "C")`.execute(
      db,
    );
  },
};
