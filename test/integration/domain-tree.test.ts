import { type AnySchema, type Database, migrateToLatest, openDatabase } from "@dmarc-ledger/db";
import { createTestDatabase, openTestPglite, type TestDatabase } from "@dmarc-ledger/db/testing";
import { type EventStore, openPostgresEventStore } from "@dmarc-ledger/event-store";
import { newEvent, streams } from "@dmarc-ledger/events";
import { catchUp } from "@dmarc-ledger/projection-engine";
import { claimExistingDomains, runProjector } from "@dmarc-ledger/projector";
import { tableMigrations } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import {
  activeClaims,
  addDomain,
  DomainOwnedElsewhereError,
  DomainTreeTakenError,
  registrableDomain,
  sameBranch,
} from "@dmarc-ledger/tenancy";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const meta = { causedBy: "process:test" };

const backends: [string, () => Promise<{ database: Database; drop: () => Promise<void> }>][] = [
  ["PGlite", async () => ({ database: await openTestPglite(), drop: async () => {} })],
  [
    "PostgreSQL",
    async () => {
      const test: TestDatabase = await createTestDatabase("dl_tree");
      return { database: await openDatabase({ kind: "postgres", url: test.url }), drop: test.drop };
    },
  ],
];

describe("a domain tree has one owner", () => {
  it("names a domain's tree by its registrable domain", () => {
    expect(registrableDomain("a.b.example.co.uk")).toBe("example.co.uk");
    expect(registrableDomain("example.com")).toBe("example.com");
    expect(sameBranch("a.example.com", "example.com")).toBe(true);
    expect(sameBranch("example.com", "a.example.com")).toBe(true);
    expect(sameBranch("a.example.com", "b.example.com")).toBe(false);
    expect(sameBranch("notexample.com", "example.com")).toBe(false);
  });
});

describe.each(backends)("add-domain's tree rule on %s", (_name, open) => {
  let database: Database;
  let drop: () => Promise<void>;
  let store: EventStore;

  beforeAll(async () => {
    ({ database, drop } = await open());
    store = await openPostgresEventStore(database);
    // Tenants with short ids the cases can name: addDomain refuses tenants that do not exist.
    for (const tenantId of ["a", "b", "one", "two"]) {
      await store.append(
        streams.tenant(tenantId),
        [newEvent("TenantCreated", { tenantId, name: tenantId, region: "global" }, meta)],
        "no_stream",
      );
    }
  });
  afterAll(async () => {
    await store?.close();
    await database?.close();
    await drop?.();
  });

  it("refuses a parent or a subdomain of another tenant's domain, and allows siblings", async () => {
    expect((await addDomain(store, { tenantId: "a", domain: "shop.tree-one.com" }, meta)).status).toBe(
      "added",
    );
    await expect(addDomain(store, { tenantId: "b", domain: "tree-one.com" }, meta)).rejects.toBeInstanceOf(
      DomainTreeTakenError,
    );
    await expect(
      addDomain(store, { tenantId: "b", domain: "x.shop.tree-one.com" }, meta),
    ).rejects.toBeInstanceOf(DomainTreeTakenError);
    await expect(
      addDomain(store, { tenantId: "b", domain: "shop.tree-one.com" }, meta),
    ).rejects.toBeInstanceOf(DomainOwnedElsewhereError);
    // The message names neither the other tenant nor its domain.
    const refusal = await addDomain(store, { tenantId: "b", domain: "tree-one.com" }, meta).catch(
      (e: Error) => e,
    );
    expect((refusal as Error).message).toBe(
      "A parent or a subdomain of tree-one.com belongs to another account; a domain tree has one owner.",
    );
    // A sibling is not a parent or a subdomain: it may belong to another tenant.
    expect((await addDomain(store, { tenantId: "b", domain: "blog.tree-one.com" }, meta)).status).toBe(
      "added",
    );
    // The owner may add the parent and subdomains of its own domains.
    expect((await addDomain(store, { tenantId: "a", domain: "x.shop.tree-one.com" }, meta)).status).toBe(
      "added",
    );
    // ...but not a parent over another tenant's sibling.
    await expect(addDomain(store, { tenantId: "a", domain: "tree-one.com" }, meta)).rejects.toBeInstanceOf(
      DomainTreeTakenError,
    );
    expect((await addDomain(store, { tenantId: "a", domain: "shop.tree-one.com" }, meta)).status).toBe(
      "already_yours",
    );
  });

  it("lets exactly one of two tenants win when they add a parent and a child at once", async () => {
    for (let round = 0; round < 8; round++) {
      const parent = `race-${round}.com`;
      const child = `mail.race-${round}.com`;
      const [first, second] = round % 2 === 0 ? [parent, child] : [child, parent];
      const outcomes = await Promise.allSettled([
        addDomain(store, { tenantId: "one", domain: first }, meta),
        addDomain(store, { tenantId: "two", domain: second }, meta),
      ]);
      const won = outcomes.filter((outcome) => outcome.status === "fulfilled");
      const lost = outcomes.filter((outcome) => outcome.status === "rejected");
      expect(won, `round ${round}`).toHaveLength(1);
      expect((lost[0] as PromiseRejectedResult).reason).toBeInstanceOf(DomainTreeTakenError);
      // Only the winner's domain stream exists.
      const streamsWritten = await Promise.all(
        [parent, child].map(async (domain) => (await store.readStream(streams.domain(domain))).length),
      );
      expect(streamsWritten.filter((length) => length > 0)).toHaveLength(1);
    }
  });

  it("finishes an add cut short between the claim and DomainAdded", async () => {
    // The claim alone, as a crash after the first append would leave it.
    await store.append(
      streams.registrableDomain("half-done.com"),
      [
        newEvent(
          "DomainReserved",
          { domain: "half-done.com", tenantId: "a", registrableDomain: "half-done.com" },
          meta,
        ),
      ],
      "no_stream",
    );
    await expect(addDomain(store, { tenantId: "b", domain: "half-done.com" }, meta)).rejects.toBeInstanceOf(
      DomainOwnedElsewhereError,
    );
    expect((await addDomain(store, { tenantId: "a", domain: "half-done.com" }, meta)).status).toBe("added");
  });
});

describe("domains added before the tree rule", () => {
  it("get their claim once the projector has caught up; two tenants in one tree are told, not decided", async () => {
    const database = await openTestPglite();
    const store = await openPostgresEventStore(database);
    await migrateToLatest(database.db, ...tableMigrations);
    const db = database.withSchema<AnySchema>();
    try {
      for (const tenantId of ["old-a", "old-b", "new-c"]) {
        await store.append(
          streams.tenant(tenantId),
          [newEvent("TenantCreated", { tenantId, name: tenantId, region: "global" }, meta)],
          "no_stream",
        );
      }
      // What add-domain wrote before the rule: DomainAdded alone, no DomainReserved.
      const addedBeforeTheRule = async (tenantId: string, domain: string) =>
        store.append(
          streams.domain(domain),
          [newEvent("DomainAdded", { domain, tenantId }, meta)],
          "no_stream",
        );
      await addedBeforeTheRule("old-a", "legacy-corp.com");
      await addedBeforeTheRule("old-b", "mail.legacy-corp.com");
      await addedBeforeTheRule("old-b", "legacy-other.com");
      // Without its claim, another tenant could still take a subdomain of an owned domain.
      expect(activeClaims(await store.readStream(streams.registrableDomain("legacy-corp.com"))).size).toBe(0);

      const lines: { level: number; msg: string; domain?: string; tenantId?: string }[] = [];
      const logger = pino(
        { level: "info" },
        { write: (line: string) => lines.push(JSON.parse(line) as (typeof lines)[number]) },
      );
      const projector = runProjector({ store, db }, logger);
      try {
        for (let i = 0; i < 400 && !lines.some((line) => line.level === 40); i++) {
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
      } finally {
        await projector.stop();
      }

      expect(activeClaims(await store.readStream(streams.registrableDomain("legacy-corp.com")))).toEqual(
        new Map([["legacy-corp.com", "old-a"]]),
      );
      expect(activeClaims(await store.readStream(streams.registrableDomain("legacy-other.com")))).toEqual(
        new Map([["legacy-other.com", "old-b"]]),
      );
      expect(lines.filter((line) => line.level === 40)).toEqual([
        expect.objectContaining({ domain: "mail.legacy-corp.com", tenantId: "old-b" }),
      ]);
      await expect(
        addDomain(store, { tenantId: "new-c", domain: "www.legacy-corp.com" }, meta),
      ).rejects.toThrow(DomainTreeTakenError);

      // Once claimed, nothing is left to do but the conflict, which is told again.
      await catchUp({ store, db, projections: allProjections });
      const again = await claimExistingDomains({ store, db }, logger);
      expect(again).toEqual({
        claimed: [],
        conflicts: [{ domain: "mail.legacy-corp.com", tenantId: "old-b" }],
        failed: [],
      });
    } finally {
      await store.close();
      await database.close();
    }
  });
});
