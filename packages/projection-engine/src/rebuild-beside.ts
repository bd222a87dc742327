import { randomBytes } from "node:crypto";
import type { AnySchema } from "@dmarc-ledger/db";
import type { EventStore, FromPosition } from "@dmarc-ledger/event-store";
import { type Kysely, sql, type Transaction } from "kysely";
import type { Projection } from "./projection.js";
import { applyBatchWithin } from "./projection-engine.js";

export interface RebuildOptions {
  store: EventStore;
  db: Kysely<AnySchema>;
  projections: readonly Projection[];
  /**
   * Whether other sessions may be writing meanwhile (a PostgreSQL pool; not PGlite, whose one
   * connection this process holds). Then the swap waits for the live projector's batch in
   * flight and catches up to it under lock.
   */
  concurrentSessions: boolean;
  batchSize?: number;
  onProgress?: (events: number) => void;
}

/**
 * Rebuilds projections from the first event beside the live tables, then swaps them in: readers
 * keep answering from the old tables until the swap, which is one short transaction.
 *
 * The new tables live in a schema of their own; the projections, unchanged, write into it
 * because each rebuild transaction puts that schema first on its search path. Indexes and
 * constraints are created after the bulk of the rows, with the live tables' names and
 * definitions.
 */
export async function rebuildBeside(options: RebuildOptions): Promise<void> {
  const { store, db, projections } = options;
  const schema = `rebuild_${randomBytes(4).toString("hex")}`;
  const retired = `${schema}_old`;
  const tables = [...new Set(projections.flatMap((projection) => projection.tables))];
  const names = projections.map((projection) => projection.name);
  let processed = 0;

  const inRebuild = <T>(trx: Transaction<AnySchema>, work: () => Promise<T>) =>
    sql`select set_config('search_path', ${`${schema}, public`}, true)`.execute(trx).then(work);

  /** Applies events after `from` into the rebuild schema; returns where it stopped. */
  const catchUpFrom = async (from: FromPosition, trx?: Transaction<AnySchema>): Promise<FromPosition> => {
    let position = from;
    for (;;) {
      const batch = await store.readAll(position, options.batchSize ?? 1000);
      if (batch.length === 0) return position;
      const apply = (t: Transaction<AnySchema>) =>
        inRebuild(t, () => applyBatchWithin(t, projections, batch));
      if (trx) await apply(trx);
      else await db.transaction().execute(apply);
      position = batch.at(-1)!.position;
      processed += batch.length;
      options.onProgress?.(processed);
    }
  };

  await sql`create schema ${sql.id(schema)}`.execute(db);
  try {
    for (const table of [...tables, "projection_checkpoint"]) {
      await sql`create table ${sql.id(schema, table)} (like ${sql.id("public", table)} including defaults)`.execute(
        db,
      );
    }
    await sql`alter table ${sql.id(schema, "projection_checkpoint")} add primary key (projection)`.execute(
      db,
    );
    // Upserts need the unique constraints while loading; plain indexes are cheaper built after.
    for (const table of tables) await copyConstraints(db, table, schema);
    const reached = await catchUpFrom("start");
    for (const table of tables) await copyIndexes(db, table, schema);

    const swap = () =>
      db.transaction().execute(async (trx) => {
        let position = reached;
        if (options.concurrentSessions) {
          // Waits for the live projector's batch in flight, and holds it off until the swap. One
          // row at a time, in the order a live batch locks them (applyBatchWithin): one statement
          // locks in the order it scans, and a live batch holding the first while waiting for a
          // later one would deadlock with it.
          for (const name of names)
            await trx
              .selectFrom("projection_checkpoint")
              .select("projection")
              .where("projection", "=", name)
              .forUpdate()
              .execute();
          position = await catchUpFrom(position, trx);
        }
        await sql`create schema ${sql.id(retired)}`.execute(trx);
        for (const table of tables) {
          await sql`alter table ${sql.id("public", table)} set schema ${sql.id(retired)}`.execute(trx);
          await sql`alter table ${sql.id(schema, table)} set schema public`.execute(trx);
        }
        // Qualified: the catch-up above put the rebuild schema first on this transaction's path.
        await sql`delete from public.projection_checkpoint where projection in (${sql.join(names)})`.execute(
          trx,
        );
        await sql`insert into public.projection_checkpoint
        select * from ${sql.id(schema, "projection_checkpoint")} where projection in (${sql.join(names)})`.execute(
          trx,
        );
        await sql`drop schema ${sql.id(retired)} cascade`.execute(trx);
      });
    const processedBeforeSwap = processed;
    for (let attempt = 1; ; attempt += 1) {
      try {
        await swap();
        break;
      } catch (error) {
        // A reader's transaction that holds one table while it waits for another the swap has
        // taken is a deadlock PostgreSQL breaks by failing one side. The swap rolled back whole:
        // the rebuilt tables stand as they were before it, and the next try catches up again.
        if (!isDeadlock(error) || attempt >= swapAttempts) throw error;
        processed = processedBeforeSwap;
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
      }
    }
  } finally {
    await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db);
  }
}

/** How often the swap is tried when PostgreSQL breaks a deadlock by failing it. */
const swapAttempts = 5;

/** PostgreSQL's deadlock_detected (40P01). */
const isDeadlock = (error: unknown): boolean =>
  typeof error === "object" && error !== null && (error as { code?: unknown }).code === "40P01";

/**
 * Creates the live table's primary key and unique constraints on the rebuilt one, under the same
 * names (names are unique per schema, so both can exist until the swap).
 */
async function copyConstraints(db: Kysely<AnySchema>, table: string, schema: string): Promise<void> {
  const { rows: constraints } = await sql<{ name: string; definition: string }>`
    select conname as name, pg_get_constraintdef(c.oid) as definition
    from pg_constraint c join pg_class t on t.oid = c.conrelid join pg_namespace n on n.oid = t.relnamespace
    where n.nspname = 'public' and t.relname = ${table} and c.contype in ('p', 'u')`.execute(db);
  for (const constraint of constraints) {
    await sql`alter table ${sql.id(schema, table)} add constraint ${sql.id(constraint.name)} ${sql.raw(constraint.definition)}`.execute(
      db,
    );
  }
}

/** Creates the live table's other indexes on the rebuilt one, under the same names. */
async function copyIndexes(db: Kysely<AnySchema>, table: string, schema: string): Promise<void> {
  const { rows: indexes } = await sql<{ definition: string }>`
    select indexdef as definition from pg_indexes
    where schemaname = 'public' and tablename = ${table}
      and indexname not in (select conname from pg_constraint c join pg_class t on t.oid = c.conrelid
        join pg_namespace n on n.oid = t.relnamespace where n.nspname = 'public' and t.relname = ${table})`.execute(
    db,
  );
  for (const index of indexes) {
    const target = index.definition.replace(` ON public.${table} `, ` ON ${schema}.${table} `);
    if (target === index.definition)
      throw new Error(`cannot place index on the rebuilt ${table}: ${index.definition}`);
    await sql.raw(target).execute(db);
  }
}
