import { type Database, openDatabase } from "@dmarc-ledger/db";
import { createTestDatabase, openTestPglite, type TestDatabase } from "@dmarc-ledger/db/testing";
import { type EventStore, openPostgresEventStore } from "@dmarc-ledger/event-store";
import { newEvent, streams } from "@dmarc-ledger/events";
import {
  addDomain,
  DomainOwnedElsewhereError,
  DomainTreeTakenError,
  registrableDomain,
  sameBranch,
} from "@dmarc-ledger/tenancy";
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
