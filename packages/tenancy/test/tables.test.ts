/**
 * The tenancy's tables, projected from its commands' events through the engine, and the reads
 * over them: keys found by hash until revoked, tenants with their counts, domains with their
 * group, claims, and a domain's audit trail in words. On PGlite, as the embedded service runs.
 */
import { type AnySchema, migrateToLatest } from "@dmarc-ledger/db";
import { openTestPglite } from "@dmarc-ledger/db/testing";
import { type EventStore, eventStoreMigrations, openPostgresEventStore } from "@dmarc-ledger/event-store";
import { newEvent, streams } from "@dmarc-ledger/events";
import { catchUp, projectionEngineMigrations } from "@dmarc-ledger/projection-engine";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  addDomain,
  countTenants,
  createTenant,
  domainHistory,
  findApiKey,
  findDomain,
  hashApiKey,
  issueApiKey,
  listTenantDomains,
  listTenants,
  listUnclaimedDomains,
  removeDomain,
  revokeApiKey,
  setDomainGroup,
  tenancyMigrations,
  tenancyProjections,
} from "../src/index.js";

const meta = { causedBy: "test" };

describe("the tenancy's tables and their reads", () => {
  let database: Awaited<ReturnType<typeof openTestPglite>>;
  let store: EventStore;
  let db: Kysely<AnySchema>;
  const project = () => catchUp({ store, db, projections: tenancyProjections });

  beforeAll(async () => {
    database = await openTestPglite();
    await migrateToLatest(database.db, eventStoreMigrations, projectionEngineMigrations, tenancyMigrations);
    store = await openPostgresEventStore(database);
    db = database.withSchema<AnySchema>();
  });
  afterAll(async () => {
    await store?.close();
    await database?.close();
  });

  it("finds a key by its hash while it is live, and counts tenants with their keys and domains", async () => {
    const acme = await createTenant(store, { name: "acme", region: "eu" }, meta);
    const other = await createTenant(store, { name: "other", region: "global" }, meta);
    const second = await issueApiKey(store, { tenantId: acme.tenantId, scopes: ["read"] }, meta);
    await addDomain(store, { tenantId: acme.tenantId, domain: "acme-corp.com" }, meta);
    await project();

    expect(await countTenants(db)).toBe(2);
    expect(await findApiKey(db, hashApiKey(second.apiKey))).toEqual({
      keyId: second.keyId,
      tenantId: acme.tenantId,
      region: "eu",
      scopes: ["read"],
    });
    await revokeApiKey(store, { tenantId: acme.tenantId, keyId: second.keyId }, meta);
    await project();
    expect(await findApiKey(db, hashApiKey(second.apiKey))).toBeNull();
    expect((await findApiKey(db, hashApiKey(acme.apiKey)))?.scopes).toEqual(["read", "write", "ingest"]);

    const tenants = await listTenants(db);
    expect(tenants.map(({ name, activeKeys, domains }) => ({ name, activeKeys, domains }))).toEqual([
      { name: "acme", activeKeys: 1, domains: 1 },
      { name: "other", activeKeys: 1, domains: 0 },
    ]);
    expect(tenants[1]!.tenantId).toBe(other.tenantId);
  });

  it("keeps the domains with their group, and forgets a removed one but not its history", async () => {
    const { tenantId } = await createTenant(store, { name: "groups", region: "global" }, meta);
    await addDomain(store, { tenantId, domain: "one-brand.com" }, meta);
    await addDomain(store, { tenantId, domain: "two-brand.com" }, meta);
    await setDomainGroup(store, { tenantId, domain: "one-brand.com", group: "Brands" }, meta);
    await removeDomain(store, { tenantId, domain: "two-brand.com" }, meta);
    await project();

    expect(await findDomain(db, "one-brand.com")).toEqual({
      domain: "one-brand.com",
      tenantId,
      group: "Brands",
    });
    expect(await findDomain(db, "two-brand.com")).toBeNull();
    expect((await listTenantDomains(db, tenantId)).map((domain) => domain.domain)).toEqual(["one-brand.com"]);
    expect(await domainHistory(db, "someone-else", "one-brand.com")).toBeNull();
    const history = (await domainHistory(db, tenantId, "one-brand.com"))!;
    expect(history.map((record) => [record.Event, record.Description])).toEqual([
      ["DomainAdded", "added to tenant groups"],
      ["DomainGroupSet", 'group set to "Brands"'],
    ]);
    // The audit trail keeps the removed domain's events (GET history asks for an owned domain).
    const rows = await db
      .selectFrom("audit_event")
      .select("event_type")
      .where("domain", "=", "two-brand.com")
      .orderBy("revision")
      .execute();
    expect(rows.map((row: { event_type: string }) => row.event_type)).toEqual([
      "DomainAdded",
      "DomainRemoved",
    ]);
  });

  it("lists the domains that hold no claim in their tree", async () => {
    const { tenantId } = await createTenant(store, { name: "old", region: "global" }, meta);
    // What add-domain wrote before the tree rule: DomainAdded alone.
    await store.append(
      streams.domain("before-the-rule.com"),
      [newEvent("DomainAdded", { domain: "before-the-rule.com", tenantId }, meta)],
      "no_stream",
    );
    await project();
    expect(await listUnclaimedDomains(db)).toEqual([{ domain: "before-the-rule.com", tenantId }]);
  });
});
