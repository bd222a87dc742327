import { type AddressInfo, connect, createServer, type Socket } from "node:net";
import { type AnySchema, type Database, migrateToLatest, openDatabase } from "@dmarc-ledger/db";
import { createTestDatabase, type TestDatabase } from "@dmarc-ledger/db/testing";
import {
  createPostgresEventStore,
  type EventStore,
  eventStoreMigrations,
  type RecordedEvent,
} from "@dmarc-ledger/event-store";
import { newEvent, streams } from "@dmarc-ledger/events";
import { type Kysely, sql } from "kysely";
import { projectionEngineMigrations } from "../src/migrations/index.js";
import type { Projection } from "../src/projection.js";

/** The tables of the projections below: how many tenants each region has, and their names. */
export interface CountSchema {
  tenants_by_region: { region: string; tenants: number };
  tenant_names: { tenant_id: string; name: string };
}

/**
 * Counts TenantCreated by region: counting, so that an event applied twice shows. `before`, when
 * given, runs before each batch is written (to fail, or to wait, in the middle of a batch).
 */
export function regionCounter(before?: (events: number) => Promise<void>): Projection<CountSchema> {
  return {
    name: "tenants_by_region",
    tables: ["tenants_by_region"],
    handles: new Set(["TenantCreated"]),
    async apply(trx, events) {
      for (const event of events) {
        if (event.type !== "TenantCreated") continue;
        await trx
          .insertInto("tenants_by_region")
          .values({ region: event.data.region, tenants: 1 })
          .onConflict((oc) =>
            oc.column("region").doUpdateSet((eb) => ({ tenants: eb("tenants_by_region.tenants", "+", 1) })),
          )
          .execute();
      }
      await before?.(events.length);
    },
  };
}

export const tenantNames: Projection<CountSchema> = {
  name: "tenant_names",
  tables: ["tenant_names"],
  handles: new Set(["TenantCreated"]),
  async apply(trx, events) {
    for (const event of events) {
      if (event.type === "TenantCreated")
        await trx
          .insertInto("tenant_names")
          .values({ tenant_id: event.data.tenantId, name: event.data.name })
          .execute();
    }
  },
};

export interface EngineWorld {
  database: Database;
  db: Kysely<CountSchema>;
  store: EventStore;
  url: string;
  /** Appends TenantCreated for `count` new tenants (`eu` every third), returns the last event. */
  createTenants(count: number): Promise<RecordedEvent>;
  close(): Promise<void>;
}

let tenantNumber = 0;

/** A fresh PostgreSQL database with the event store, the engine's checkpoints and the tables above. */
export async function openEngineWorld(prefix: string): Promise<EngineWorld> {
  const testDatabase: TestDatabase = await createTestDatabase(prefix);
  const database = await openDatabase({ kind: "postgres", url: testDatabase.url });
  await migrateToLatest(database.db, eventStoreMigrations, projectionEngineMigrations);
  await sql`create table tenants_by_region (region text primary key, tenants int not null)`.execute(
    database.db,
  );
  await sql`create table tenant_names (tenant_id text primary key, name text not null)`.execute(database.db);
  await sql`create index tenant_names_by_name on tenant_names (name)`.execute(database.db);
  const store = createPostgresEventStore(database);
  return {
    database,
    db: database.withSchema<CountSchema>(),
    store,
    url: testDatabase.url,
    async createTenants(count) {
      let last: RecordedEvent | undefined;
      for (let i = 0; i < count; i++) {
        const tenantId = `t${++tenantNumber}`;
        const region = tenantNumber % 3 === 0 ? "eu" : "global";
        await store.append(
          streams.tenant(tenantId),
          [
            newEvent(
              "TenantCreated",
              { tenantId, name: `tenant ${tenantNumber}`, region },
              { causedBy: "test" },
            ),
          ],
          "no_stream",
        );
        last = (await store.readStream(streams.tenant(tenantId)))[0];
      }
      return last!;
    },
    async close() {
      await store.close();
      await database.close();
      await testDatabase.drop();
    },
  };
}

/** Everything the store holds, read in pages as the engine reads it. */
export async function allEvents(store: EventStore): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  for (;;) {
    const page = await store.readAll(events.at(-1)?.position ?? "start", 500);
    if (page.length === 0) return events;
    events.push(...page);
  }
}

export async function regionCounts(db: Kysely<CountSchema>): Promise<Record<string, number>> {
  const rows = await db.selectFrom("tenants_by_region").selectAll().orderBy("region").execute();
  return Object.fromEntries(rows.map((row) => [row.region, Number(row.tenants)]));
}

export async function checkpointOf(db: Kysely<AnySchema>, projection: string): Promise<bigint | null> {
  const { rows } = await sql<{ position: string }>`select position::text from projection_checkpoint
    where projection = ${projection}`.execute(db);
  return rows[0] ? BigInt(rows[0].position) : null;
}

export interface CuttableLink {
  /** `url` with its host and port replaced by the link's. */
  url: string;
  /** Drops every connection through the link and refuses new ones: the host behind it is gone. */
  cut(): Promise<void>;
}

/**
 * A TCP relay on loopback between one process's connections and the server, that a test cuts:
 * to the server, the process behind it is dead (its connections end, its transactions roll
 * back), and the process can no longer reach the database.
 */
export async function cuttableLink(url: string): Promise<CuttableLink> {
  const target = new URL(url);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {});
    }
    client.pipe(upstream).pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const linked = new URL(url);
  linked.hostname = "127.0.0.1";
  linked.port = String(port);
  return {
    url: linked.toString(),
    async cut() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
