import type { MigrationSet } from "@dmarc-ledger/db";
import { type CreateTableBuilder, type Kysely, sql } from "kysely";

// Migrations take Kysely<any>: they run before the schema they create exists.
// biome-ignore lint/suspicious/noExplicitAny: see above
type AnyDb = Kysely<any>;

/** The summed counters every rollup has besides `dmarc_pass` (which agg_source keeps as a key). */
// biome-ignore lint/suspicious/noExplicitAny: the builder's column names are not known here
const counters = (table: CreateTableBuilder<string, any>) =>
  table
    .addColumn("volume", "bigint", (c) => c.notNull())
    .addColumn("unaligned_arc_pass", "bigint", (c) => c.notNull())
    .addColumn("dkim_aligned", "bigint", (c) => c.notNull())
    .addColumn("spf_aligned", "bigint", (c) => c.notNull())
    .addColumn("dkim_pass", "bigint", (c) => c.notNull())
    .addColumn("spf_pass", "bigint", (c) => c.notNull());

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
    "002_groupings": {
      up: async (db: AnyDb) => {
        await counters(
          db.schema
            .createTable("agg_organization")
            .addColumn("domain", "text", (c) => c.notNull())
            .addColumn("organization", "text", (c) => c.notNull())
            .addColumn("t", "bigint", (c) => c.notNull())
            .addColumn("dmarc_pass", "bigint", (c) => c.notNull()),
        )
          .addPrimaryKeyConstraint("agg_organization_pk", ["domain", "organization", "t"])
          .execute();
        await db.schema
          .createIndex("agg_organization_by_t")
          .on("agg_organization")
          .columns(["t", "domain"])
          .execute();
        await counters(
          db.schema
            .createTable("agg_source")
            .addColumn("domain", "text", (c) => c.notNull())
            .addColumn("source_ip", "text", (c) => c.notNull())
            .addColumn("organization", "text", (c) => c.notNull())
            .addColumn("t", "bigint", (c) => c.notNull())
            .addColumn("disposition", "text", (c) => c.notNull())
            .addColumn("arc", "text", (c) => c.notNull())
            .addColumn("spf_domain", "text", (c) => c.notNull())
            .addColumn("dkim_domain", "text", (c) => c.notNull())
            .addColumn("dmarc_pass", "boolean", (c) => c.notNull()),
        )
          .addPrimaryKeyConstraint("agg_source_pk", [
            "domain",
            "t",
            "source_ip",
            "organization",
            "disposition",
            "arc",
            "spf_domain",
            "dkim_domain",
            "dmarc_pass",
          ])
          .execute();
        await db.schema.createIndex("agg_source_by_t").on("agg_source").columns(["t", "domain"]).execute();
        await db.schema
          .createTable("source_ip_name")
          .addColumn("source_ip", "text", (c) => c.primaryKey())
          .addColumn("source_domain", "text", (c) => c.notNull())
          .execute();
        await db.schema
          .createTable("forensic_report")
          .addColumn("forensic_id", "bigint", (c) => c.primaryKey())
          .addColumn("identity", "text", (c) => c.notNull().unique())
          .addColumn("domain", "text", (c) => c.notNull())
          .addColumn("received", "bigint", (c) => c.notNull())
          .addColumn("subject", "text", (c) => c.notNull())
          .addColumn("amount", "bigint", (c) => c.notNull())
          .addColumn("headers", "text", (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex("forensic_report_by_received")
          .on("forensic_report")
          .columns(["received", "forensic_id"])
          .execute();
      },
    },
    "003_audit_and_safe_spf": {
      up: async (db: AnyDb) => {
        await db.schema
          .createTable("audit_event")
          .addColumn("domain", "text", (c) => c.notNull())
          .addColumn("revision", "bigint", (c) => c.notNull())
          .addColumn("event_type", "text", (c) => c.notNull())
          .addColumn("recorded_at", "timestamptz", (c) => c.notNull())
          .addColumn("caused_by", "text", (c) => c.notNull())
          .addColumn("correlation_id", "text")
          .addColumn("data", "text", (c) => c.notNull())
          .addPrimaryKeyConstraint("audit_event_pk", ["domain", "revision"])
          .execute();
        await db.schema
          .createTable("safe_spf")
          .addColumn("domain", "text", (c) => c.primaryKey())
          .addColumn("tenant_id", "text", (c) => c.notNull())
          .addColumn("original", "text", (c) => c.notNull())
          .addColumn("status", "text", (c) => c.notNull())
          .addColumn("records", "text", (c) => c.notNull())
          .addColumn("lookups_before", "integer")
          .addColumn("lookups_after", "integer")
          .addColumn("warnings", "text", (c) => c.notNull())
          .addColumn("last_computed", "timestamptz")
          .addColumn("last_error", "text")
          .addColumn("retrying", "boolean", (c) => c.notNull().defaultTo(false))
          .addColumn("updated_at", "timestamptz", (c) => c.notNull())
          .execute();
      },
    },
    "004_report_domains": {
      up: async (db: AnyDb) => {
        await db.schema
          .createTable("report_domain")
          .addColumn("domain", "text", (c) => c.primaryKey())
          .execute();
      },
    },
    "005_source_rankings": {
      up: async (db: AnyDb) => {
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
    },
    "006_ranking_extents": {
      up: async (db: AnyDb) => {
        // Rankings are derived and rebuilt by upkeep: the old ones have no extent, so they go.
        await sql`delete from source_ranking`.execute(db);
        await sql`delete from source_ranking_build`.execute(db);
        // The first and last second of a group's facts in the bucket. A period that ends or
        // starts inside the bucket leaves out the groups with facts at its edges: these indexes
        // find exactly them, with their sums, in one range each (looking each group up by its key
        // took 5 µs × 23,000 groups for one day left out at 10M rows).
        await sql`alter table source_ranking add column first_t bigint not null default 0,
          add column last_t bigint not null default 0`.execute(db);
        await sql`create index source_ranking_by_first_t on source_ranking (ranking_id, first_t)`.execute(db);
        await sql`create index source_ranking_by_last_t on source_ranking (ranking_id, last_t)`.execute(db);
      },
    },
    "007_ranking_extents_as_offsets": {
      up: async (db: AnyDb) => {
        // The extents become distances from the bucket's edges. As absolute seconds, the
        // statistics of first_t span every ranking: for "first_t <= the first day of December"
        // the planner expected 400,000 of the December ranking's 466,000 groups (22,800 real) and
        // walked the whole ranking through the other index. As offsets, a day at the edge is a
        // small value in every ranking, and the estimate follows.
        await sql`alter table source_ranking add column start_offset bigint, add column end_offset bigint`.execute(
          db,
        );
        await sql`update source_ranking r set start_offset = r.first_t - b.bucket_start,
          end_offset = b.bucket_end - r.last_t
          from source_ranking_build b where b.ranking_id = r.ranking_id`.execute(db);
        // A ranking row without its build is unreachable; none should exist, but none may stay.
        await sql`delete from source_ranking where start_offset is null`.execute(db);
        await sql`alter table source_ranking alter column start_offset set not null,
          alter column end_offset set not null, drop column first_t, drop column last_t`.execute(db);
        await sql`create index source_ranking_by_start_offset on source_ranking (ranking_id, start_offset)`.execute(
          db,
        );
        await sql`create index source_ranking_by_end_offset on source_ranking (ranking_id, end_offset)`.execute(
          db,
        );
      },
    },
    "008_source_change_counter": {
      up: async (db: AnyDb) => {
        // Builds read the latest batch number from one row instead of max(changed_seq) over all
        // of agg_source (a full scan: BRIN cannot answer max; 2 GB at 10M report rows, once per
        // build and per refresh). The row continues the numbers the sequence gave out.
        await sql`create table agg_source_change (single boolean primary key check (single),
          last_seq bigint not null)`.execute(db);
        await sql`insert into agg_source_change (single, last_seq)
          select true, coalesce(max(changed_seq), 0) from agg_source`.execute(db);
        await sql`drop sequence agg_source_change_seq`.execute(db);
      },
    },
    "009_safe_spf_refresh": {
      up: async (db: AnyDb) => {
        // The shortest TTL a record was built from: when it is due again (projected from events).
        await db.schema.alterTable("safe_spf").addColumn("min_ttl", "integer").execute();
        // The refresher's schedule and its leases. Not a projection: "checked, unchanged" is no
        // event, so replay neither builds nor drops this table; a missing row is derived again
        // from safe_spf (last_computed + min_ttl), so the schedule survives anything.
        await db.schema
          .createTable("safe_spf_refresh")
          .addColumn("domain", "text", (c) => c.primaryKey())
          .addColumn("next_due", "timestamptz", (c) => c.notNull())
          .addColumn("last_checked", "timestamptz")
          .addColumn("valid_until", "timestamptz")
          .addColumn("failures", "integer", (c) => c.notNull().defaultTo(0))
          .addColumn("failure", "text")
          .addColumn("failing_since", "timestamptz")
          .addColumn("lease_owner", "text")
          .addColumn("lease_until", "timestamptz")
          .execute();
        await db.schema
          .createIndex("safe_spf_refresh_due")
          .on("safe_spf_refresh")
          .column("next_due")
          .execute();
      },
    },
    "010_source_ip_names": {
      up: async (db: AnyDb) => {
        // The last answer for each source IP, beside the domain the by-source records show:
        // the resolver reads which IPs are due again from here.
        await sql`alter table source_ip_name add column ptr_name text,
          add column confirmed boolean not null default false,
          add column outcome text not null default 'found',
          add column resolved_at timestamptz not null default now(),
          add column answered_at timestamptz`.execute(db);
        await sql`create index source_ip_name_by_resolved_at on source_ip_name (resolved_at)`.execute(db);
      },
    },
    "011_domain_claim": {
      up: async (db: AnyDb) => {
        // Filled by the domain-claims projection from the first event (a new projection
        // catches up from the start), so domains added before the tree rule show unclaimed.
        await db.schema
          .createTable("domain_claim")
          .addColumn("domain", "text", (c) => c.primaryKey())
          .addColumn("tenant_id", "text", (c) => c.notNull())
          .execute();
      },
    },
  },
};
