/**
 * The feed's index on both databases the PostgreSQL adapter runs on: a report is for whoever
 * owned its domain (or a parent) at its place in the order, the reports of a domain are found
 * by domain, a rebuild gives the same rows, and readAt finds the events by position with or
 * without the adapter's own read.
 */
import { randomUUID } from "node:crypto";
import { type AnySchema, type Database, migrateToLatest, openDatabase } from "@dmarc-ledger/db";
import { createTestDatabase, openTestPglite } from "@dmarc-ledger/db/testing";
import {
  type EventStore,
  eventStoreMigrations,
  openPostgresEventStore,
  readAt,
} from "@dmarc-ledger/event-store";
import { type AggregateReportReceived, newEvent, streams } from "@dmarc-ledger/events";
import { catchUp, projectionEngineMigrations, resetProjections } from "@dmarc-ledger/projection-engine";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventFeedMigrations, eventFeedProjection, feedPositions } from "../src/index.js";

const meta = { causedBy: "test" };

function report(domain: string, reportId: string): AggregateReportReceived {
  return {
    identity: reportId,
    schema: "rfc7489",
    orgName: "google.com",
    organization: "google.com",
    email: "noreply-dmarc-support@google.com",
    reportId,
    begin: 1700000000,
    end: 1700086399,
    policy: {
      domain,
      adkim: null,
      aspf: null,
      p: "none",
      sp: null,
      np: null,
      pct: null,
      fo: null,
      testing: null,
      discoveryMethod: null,
    },
    rows: [],
    chunk: { index: 0, last: true },
    source: "test",
    warnings: [],
  };
}

const backends = [
  ["PostgreSQL", true],
  ["PGlite", false],
] as const;

describe.each(backends)("the feed's index on %s", (_name, server) => {
  let database: Database;
  let close: () => Promise<void>;
  let store: EventStore;
  let db: Kysely<AnySchema>;
  const project = () => catchUp({ store, db, projections: [eventFeedProjection] });

  beforeAll(async () => {
    if (server) {
      const testDatabase = await createTestDatabase("dl_feed");
      database = await openDatabase({ kind: "postgres", url: testDatabase.url });
      close = async () => {
        await database.close();
        await testDatabase.drop();
      };
    } else {
      database = await openTestPglite();
      close = () => database.close();
    }
    await migrateToLatest(database.db, eventStoreMigrations, projectionEngineMigrations, eventFeedMigrations);
    store = await openPostgresEventStore(database);
    db = database.withSchema<AnySchema>();
  });
  afterAll(async () => {
    await store?.close();
    await close?.();
  });

  it("gives a report to the owner of its domain at its place in the order, and finds reports by domain", async () => {
    const [acme, beta] = [randomUUID(), randomUUID()];
    const append = async (stream: string, event: ReturnType<typeof newEvent>) =>
      (await store.append(stream, [event], "any")).position;
    const tenantCreated = await append(
      streams.tenant(acme),
      newEvent("TenantCreated", { tenantId: acme, name: "acme", region: "global" }, meta),
    );
    const early = await append(
      streams.aggregateReport("early"),
      newEvent("AggregateReportReceived", report("mail.example.com", "early"), meta),
    );
    const added = await append(
      streams.domain("example.com"),
      newEvent("DomainAdded", { domain: "example.com", tenantId: acme }, meta),
    );
    const owned = await append(
      streams.aggregateReport("owned"),
      newEvent("AggregateReportReceived", report("mail.example.com", "owned"), meta),
    );
    const other = await append(
      streams.aggregateReport("other"),
      newEvent("AggregateReportReceived", report("example.org", "other"), meta),
    );
    const removed = await append(
      streams.domain("example.com"),
      newEvent("DomainRemoved", { domain: "example.com", tenantId: acme }, meta),
    );
    const betaAdded = await append(
      streams.domain("example.com"),
      newEvent("DomainAdded", { domain: "example.com", tenantId: beta }, meta),
    );
    const late = await append(
      streams.aggregateReport("late"),
      newEvent("AggregateReportReceived", report("example.com", "late"), meta),
    );
    await project();

    const all = async (tenantId: string) => feedPositions(db, { tenantId, after: null, limit: 1000 });
    expect(await all(acme)).toEqual([tenantCreated, added, owned, removed]);
    expect(await all(beta)).toEqual([betaAdded, late]);
    // Beta's DomainAdded brings the earlier reports of example.com and its subdomains.
    const byDomain = (before: bigint, after: bigint | null = null) =>
      feedPositions(db, { tenantId: beta, after, limit: 1000, byDomain: { domain: "example.com", before } });
    expect(await byDomain(betaAdded)).toEqual([early, owned]);
    expect(await byDomain(betaAdded, early)).toEqual([owned]);
    expect(await byDomain(added)).toEqual([early]);
    expect(other).toBeGreaterThan(owned);

    // A rebuild from the first event gives the same rows.
    await resetProjections(db, [eventFeedProjection]);
    await project();
    expect(await all(acme)).toEqual([tenantCreated, added, owned, removed]);
    expect(await all(beta)).toEqual([betaAdded, late]);

    // The events at those positions, in the order asked, by the adapter and by readAll alone.
    const asked = [late, early, added];
    const byAdapter = await readAt(store, asked);
    expect(byAdapter.map((event) => event.position)).toEqual(asked);
    const readAllOnly: EventStore = {
      ...store,
      readAt: undefined,
      readAll: (from, limit) => store.readAll(from, limit),
    };
    expect((await readAt(readAllOnly, asked)).map((event) => event.id)).toEqual(
      byAdapter.map((event) => event.id),
    );
  });

  it("orders by position as numbers, not as text (9 before 10 before 100)", async () => {
    const tenantId = randomUUID();
    const at = (position: bigint) => ({
      type: "ApiKeyRevoked" as const,
      data: { tenantId, keyId: `k${position}` },
      stream: streams.tenant(tenantId),
      revision: 0n,
      position,
      metadata: {},
      recordedAt: new Date(),
    });
    await db
      .transaction()
      .execute((trx) => eventFeedProjection.apply(trx as never, [at(9n), at(10n), at(100n)]));
    expect(await feedPositions(db, { tenantId, after: null, limit: 10 })).toEqual([9n, 10n, 100n]);
    expect(await feedPositions(db, { tenantId, after: 9n, limit: 10 })).toEqual([10n, 100n]);
  });
});
