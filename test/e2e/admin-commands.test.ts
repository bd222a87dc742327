/**
 * The operator's commands (issue 13): listing tenants, keys and domains, issuing keys by tenant
 * name, removing a domain, and clear errors for tenants, keys and regions that do not exist here.
 */
import { openRuntime } from "@dmarc-ledger/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateReport, appendAggregateReports } from "../support/aggregate-report.js";
import { type Backend, cli, postgresBackend, startTestService } from "../support/service-harness.js";

const day = Date.UTC(2026, 0, 10) / 1000;

describe("admin commands", () => {
  let backend: Backend;
  let env: NodeJS.ProcessEnv;
  let acme: { tenantId: string; apiKey: string };
  let other: { tenantId: string; apiKey: string };

  const create = async (name: string) => {
    const created = await cli(env, "tenant", "create", name, "--json");
    expect(created.code).toBe(0);
    return JSON.parse(created.out) as { tenantId: string; apiKey: string };
  };

  beforeAll(async () => {
    backend = await postgresBackend();
    env = { ...backend.env };
    acme = await create("acme");
    other = await create("other");
  });

  afterAll(async () => {
    await backend?.cleanup();
  });

  it("prints its version", async () => {
    const { code, out } = await cli(env, "--version");
    expect(code).toBe(0);
    expect(out).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("lists tenants with their keys and domains", async () => {
    expect((await cli(env, "domain", "add", "acme", "acme-ledger.com")).code).toBe(0);
    const listed = await cli(env, "tenant", "list", "--json");
    expect(listed.code).toBe(0);
    // One JSON document, not one object per line.
    const tenants = JSON.parse(listed.out);
    expect(tenants).toEqual([
      expect.objectContaining({
        tenantId: acme.tenantId,
        name: "acme",
        region: "global",
        activeKeys: 1,
        domains: 1,
      }),
      expect.objectContaining({ tenantId: other.tenantId, name: "other", activeKeys: 1, domains: 0 }),
    ]);
    const domains = JSON.parse((await cli(env, "domain", "list", "--json")).out);
    expect(domains).toEqual([
      expect.objectContaining({ domain: "acme-ledger.com", tenantId: acme.tenantId }),
    ]);
    // Nothing to list is an empty document, not nothing.
    expect(JSON.parse((await cli(env, "domain", "list", "other", "--json")).out)).toEqual([]);
  });

  it("issues a key by tenant name, lists keys, and revokes one by id", async () => {
    const issued = await cli(env, "tenant", "key", "issue", "acme", "--scopes", "read", "--json");
    expect(issued.code).toBe(0);
    const { keyId, apiKey } = JSON.parse(issued.out) as { keyId: string; apiKey: string };
    type ListedKey = { keyId: string; keyPrefix: string; revokedAt: string | null };
    let keys: ListedKey[] = JSON.parse(
      (await cli(env, "tenant", "key", "list", acme.tenantId, "--json")).out,
    );
    expect(keys).toHaveLength(2);
    expect(keys.find((key) => key.keyId === keyId)).toMatchObject({
      keyPrefix: apiKey.slice(0, keys[0]!.keyPrefix.length),
      scopes: ["read"],
      revokedAt: null,
    });
    // The listing never shows a whole key.
    expect((await cli(env, "tenant", "key", "list", "acme")).out).not.toContain(apiKey);

    expect((await cli(env, "tenant", "key", "revoke", "acme", keyId)).out).toContain("revoked");
    keys = JSON.parse((await cli(env, "tenant", "key", "list", "acme", "--json")).out);
    expect(keys.find((key) => key.keyId === keyId)?.revokedAt).not.toBeNull();
    const again = await cli(env, "tenant", "key", "revoke", "acme", keyId);
    expect(again.code).toBe(0);
    expect(again.out).toContain("already revoked");
  });

  it("refuses unknown tenants and keys with a clear error and exit 1", async () => {
    const noTenant = "00000000-0000-4000-8000-000000000000";
    for (const argv of [
      ["domain", "add", noTenant, "orphan-ledger.com"],
      ["tenant", "key", "issue", "nobody"],
      ["tenant", "key", "revoke", noTenant, "some-key"],
      ["tenant", "key", "list", "nobody"],
      ["domain", "list", "nobody"],
    ]) {
      const result = await cli(env, ...argv);
      expect(result.code, argv.join(" ")).toBe(1);
      expect(result.err, argv.join(" ")).toMatch(/no tenant/i);
    }
    const noKey = await cli(env, "tenant", "key", "revoke", "acme", "not-a-key");
    expect(noKey.code).toBe(1);
    expect(noKey.err).toContain("has no API key not-a-key");
    // orphan-ledger.com was not blocked for real tenants by the refused add.
    expect((await cli(env, "domain", "add", "other", "orphan-ledger.com")).code).toBe(0);
  });

  it("refuses a tenant of the other region", async () => {
    const refused = await cli(env, "tenant", "create", "euro", "--region", "eu");
    expect(refused.code).toBe(1);
    expect(refused.err).toContain("serves the global region");
    const onEu = await cli({ ...env, DMARC_LEDGER_REGION: "eu" }, "tenant", "create", "euro", "--json");
    expect(onEu.code).toBe(0);
    expect(JSON.parse(onEu.out).apiKey).toMatch(/^dlk_eu_/);
  });

  it("removes a domain: its reports stop counting, the audit trail keeps it, another tenant may add it", async () => {
    expect((await cli(env, "domain", "add", "acme", "gone-ledger.com")).code).toBe(0);
    const runtime = await openRuntime(env);
    await appendAggregateReports(runtime.store, [
      aggregateReport({
        identity: "admin-gone-1",
        domain: "gone-ledger.com",
        organization: "google.com",
        begin: day,
        end: day + 86_399,
        rows: [
          { sourceIp: "192.0.2.1", count: 7, disposition: "none", policyDkim: "pass", policySpf: "pass" },
        ],
      }),
    ]);
    await runtime.close();
    const service = await startTestService(env);
    try {
      const byDomain = async (key: string) =>
        (
          (await service.get(`aggregate_by_domain?start=${day - 86_400}&end=${day + 86_400}`, key)).json as {
            records: { Domain: string; Volume: string }[];
          }
        ).records;
      expect(await byDomain(acme.apiKey)).toContainEqual(
        expect.objectContaining({ Domain: "gone-ledger.com", Volume: "7" }),
      );

      const removed = await cli(env, "domain", "remove", "acme", "gone-ledger.com");
      // In embedded mode the service would hold the data directory; on PostgreSQL both may run.
      expect(removed.code).toBe(0);
      // The service's projector applies the removal.
      await expect.poll(() => byDomain(acme.apiKey), { timeout: 10_000 }).toEqual([]);
      expect((await cli(env, "domain", "list", "acme")).out).not.toContain("gone-ledger.com");

      const history = await cli(env, "history", "gone-ledger.com");
      expect(history.out).toMatch(/added to tenant[\s\S]*removed from tenant/);
      const events = JSON.parse((await cli(env, "history", "gone-ledger.com", "--json")).out);
      expect(events.map((event: { type: string }) => event.type)).toEqual(["DomainAdded", "DomainRemoved"]);
      // Removing twice is an error: it is no longer the tenant's.
      expect((await cli(env, "domain", "remove", "acme", "gone-ledger.com")).code).toBe(1);

      // Claimable again, by another tenant, whose answers now count the report.
      expect((await cli(env, "domain", "add", "other", "gone-ledger.com")).code).toBe(0);
      await expect
        .poll(() => byDomain(other.apiKey), { timeout: 10_000 })
        .toContainEqual(expect.objectContaining({ Domain: "gone-ledger.com", Volume: "7" }));
      expect(await byDomain(acme.apiKey)).toEqual([]);
    } finally {
      await service.stop();
    }
  });

  it("lets a removed parent's subdomain go to another tenant (the tree claim is released)", async () => {
    expect((await cli(env, "domain", "add", "acme", "tree-ledger.com")).code).toBe(0);
    const blocked = await cli(env, "domain", "add", "other", "mail.tree-ledger.com");
    expect(blocked.code).toBe(1);
    expect((await cli(env, "domain", "remove", "acme", "tree-ledger.com")).code).toBe(0);
    expect((await cli(env, "domain", "add", "other", "mail.tree-ledger.com")).code).toBe(0);
    expect((await cli(env, "domain", "add", "acme", "tree-ledger.com")).code).toBe(1);
  });
});
