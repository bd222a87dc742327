/**
 * A service's decision records the addresses it grouped then (SenderApprovalSet v2), and the
 * sender_approvals projection keeps them: deciding it again records them anew only when they
 * changed; clearing it or removing the domain forgets them; a v1 decision records none. On PGlite.
 */
import { type AnySchema, migrateToLatest } from "@dmarc-ledger/db";
import { openTestPglite } from "@dmarc-ledger/db/testing";
import { type EventStore, eventStoreMigrations, openPostgresEventStore } from "@dmarc-ledger/event-store";
import { type ApprovalMembers, decodeEvent, type SenderApprovalSet, streams } from "@dmarc-ledger/events";
import { catchUp, projectionEngineMigrations } from "@dmarc-ledger/projection-engine";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  addDomain,
  createTenant,
  domainHistory,
  removeDomain,
  setSenderApproval,
  tenancyMigrations,
  tenancyProjections,
} from "../src/index.js";

const meta = { causedBy: "test" };

// Google's outbound mail servers (mail-*.google.com), as the corpus's reports name them.
const google = ["209.85.220.41", "209.85.220.69", "2607:f8b0:4864:20::c2f"];

describe("the addresses a service's decision recorded", () => {
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

  const decisions = async (domain: string) =>
    (await store.readStream(streams.domain(domain)))
      .map(decodeEvent)
      .filter((event) => event?.type === "SenderApprovalSet")
      .map((event) => event!.data as SenderApprovalSet);
  const recorded = async (domain: string, service: string) => ({
    count: (
      await db
        .selectFrom("sender_approval")
        .select("members_count")
        .where("domain", "=", domain)
        .where("sender", "=", service)
        .executeTakeFirst()
    )?.members_count,
    addresses: (
      await db
        .selectFrom("sender_approval_member")
        .select("source_ip")
        .where("domain", "=", domain)
        .where("service", "=", service)
        .orderBy("source_ip")
        .execute()
    ).map((row: { source_ip: string }) => row.source_ip),
  });

  it("records them, again only when they changed, and forgets them when cleared", async () => {
    const { tenantId } = await createTenant(store, { name: "members", region: "global" }, meta);
    await addDomain(store, { tenantId, domain: "example.com" }, meta);
    let grouped: ApprovalMembers = { addresses: google.slice(0, 2), count: 2 };
    const asked: [string, string][] = [];
    const readMembers = async (domain: string, service: string) => {
      asked.push([domain, service]);
      return grouped;
    };
    const approve = (approved: boolean | null) =>
      setSenderApproval(
        store,
        { tenantId, domain: "Example.COM", service: "Google", approved },
        meta,
        readMembers,
      );

    expect(await approve(true)).not.toBeNull();
    // The reader is asked for the domain as normalised.
    expect(asked).toEqual([["example.com", "Google"]]);
    // The same decision over the same addresses appends nothing.
    expect(await approve(true)).toBeNull();
    await project();
    expect(await recorded("example.com", "Google")).toEqual({ count: 2, addresses: google.slice(0, 2) });

    // The group gained an address: approving again records it.
    grouped = { addresses: google, count: 3 };
    expect(await approve(true)).not.toBeNull();
    await project();
    expect(await recorded("example.com", "Google")).toEqual({ count: 3, addresses: [...google].sort() });
    expect((await decisions("example.com")).map((d) => d.members)).toEqual([
      { addresses: google.slice(0, 2), count: 2 },
      { addresses: google, count: 3 },
    ]);

    // A range records none; clearing the service forgets its addresses.
    await setSenderApproval(
      store,
      { tenantId, domain: "example.com", range: "209.85.128.0/17", approved: true },
      meta,
    );
    expect(await approve(null)).not.toBeNull();
    await project();
    expect(await recorded("example.com", "Google")).toEqual({ count: undefined, addresses: [] });
    expect(await recorded("example.com", "209.85.128.0/17")).toEqual({ count: null, addresses: [] });
    expect((await decisions("example.com")).slice(2).map((d) => d.members)).toEqual([null, null]);
    expect(asked).toHaveLength(3);
    // The audit trail says how many addresses each decision covered.
    const history = (await domainHistory(db, tenantId, "example.com"))!;
    expect(history.filter((r) => r.Event === "SenderApprovalSet").map((r) => r.Description)).toEqual([
      'service "Google" approved (it grouped 2 addresses)',
      'service "Google" approved (it grouped 3 addresses)',
      "range 209.85.128.0/17 approved",
      'service "Google": approval cleared',
    ]);
  });

  it("keeps a list cut at the limit with its full count, and forgets it with the domain", async () => {
    const { tenantId } = await createTenant(store, { name: "many", region: "global" }, meta);
    await addDomain(store, { tenantId, domain: "example.org" }, meta);
    const many = Array.from({ length: 10_000 }, (_, n) => `10.${n >> 8}.${n & 255}.1`).sort();
    await setSenderApproval(
      store,
      { tenantId, domain: "example.org", service: "Amazon SES", approved: false },
      meta,
      async () => ({ addresses: many, count: 12_345 }),
    );
    await project();
    const kept = await recorded("example.org", "Amazon SES");
    expect(kept.count).toBe(12_345);
    expect(kept.addresses).toHaveLength(10_000);
    await removeDomain(store, { tenantId, domain: "example.org" }, meta);
    await project();
    expect(await recorded("example.org", "Amazon SES")).toEqual({ count: undefined, addresses: [] });
  });

  it("reads a v1 decision as one that recorded no addresses", async () => {
    const { tenantId } = await createTenant(store, { name: "older", region: "global" }, meta);
    await addDomain(store, { tenantId, domain: "example.net" }, meta);
    const v1 = { domain: "example.net", tenantId, service: "Google", range: null, approved: true };
    await store.append(
      streams.domain("example.net"),
      [{ type: "SenderApprovalSet", data: v1, metadata: { ...meta, schemaVersion: 1 } }],
      "stream_exists",
    );
    await project();
    expect((await decisions("example.net"))[0]).toEqual({ ...v1, members: null });
    expect(await recorded("example.net", "Google")).toEqual({ count: null, addresses: [] });
    // Approving it again with its addresses read records them.
    const position = await setSenderApproval(
      store,
      { tenantId, domain: "example.net", service: "Google", approved: true },
      meta,
      async () => ({ addresses: google, count: 3 }),
    );
    expect(position).not.toBeNull();
    await project();
    expect((await recorded("example.net", "Google")).count).toBe(3);
  });
});
