import { Resolver } from "node:dns/promises";
import { type FixtureDnsServer, providerZones, startFixtureDnsServer } from "@dmarc-ledger/safe-spf/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Backend,
  cli,
  postgresBackend,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";

interface SafeSpfBody {
  status: string;
  domain: string;
  safe_spf: {
    original: string;
    status: string;
    records: { name: string; value: string }[];
    lookups_before: number | null;
    lookups_after: number | null;
    last_error: string | null;
    retrying: boolean;
  } | null;
}

describe("Safe SPF over HTTP, with DNS served by a real dns2 server", () => {
  let dns: FixtureDnsServer;
  let backend: Backend;
  let handle: ServiceHandle;
  let key: string;

  const stateOf = async (domain: string) =>
    (await handle.get(`safe_spf?domain=${domain}`, key)).json as SafeSpfBody;
  async function settled(domain: string, original: string): Promise<SafeSpfBody> {
    for (let attempt = 0; attempt < 400; attempt++) {
      const body = await stateOf(domain);
      if (body.safe_spf && body.safe_spf.original === original && body.safe_spf.status !== "pending")
        return body;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`Safe SPF of ${domain} did not settle`);
  }

  beforeAll(async () => {
    dns = await startFixtureDnsServer(providerZones, { silentNames: ["silent.outlook.test"] });
    backend = await postgresBackend();
    key = JSON.parse((await cli(backend.env, "tenant", "create", "acme", "--json")).out).apiKey;
    handle = await startTestService({
      ...backend.env,
      DNS_NAMESERVERS: dns.address,
      DNS_TIMEOUT_MS: "300",
      SAFE_SPF_ZONE: "spf.ledger.example",
      REPORTS_DOMAIN: "reports.ledger.example",
      DNS_PORT: "0",
    });
    for (const domain of ["example.com", "example.org"]) {
      expect((await handle.put("add-domain", key, { domain })).status).toBe(200);
    }
  });

  afterAll(async () => {
    await handle?.stop();
    await backend?.cleanup();
    await dns?.close();
  });

  it("stores the original, flattens it through DNS and publishes records within the limits", async () => {
    const original = "v=spf1 include:_spf.gmail.test include:spf.outlook.test include:servers.mcsv.test ~all";
    const put = await handle.put("update_safe_spf", key, { domain: "example.com", original });
    expect(put).toEqual({ status: 200, json: { status: "SUCCESS" } });
    // Read-your-writes: the original is visible at once, pending or already computed.
    expect((await stateOf("example.com")).safe_spf?.original).toBe(original);

    const body = await settled("example.com", original);
    const state = body.safe_spf!;
    expect(state.status).toBe("computed");
    expect(state.last_error).toBeNull();
    expect(state.lookups_before).toBeGreaterThan(state.lookups_after!);
    expect(state.lookups_after).toBeLessThanOrEqual(10);
    expect(state.records[0]!.name).toBe("example.com.spf.ledger.example");
    for (const record of state.records) {
      expect(Buffer.byteLength(record.value)).toBeLessThanOrEqual(450);
      expect(record.value).toMatch(/^v=spf1 /);
      expect(record.value).not.toContain("include:_spf.gmail.test");
    }
    expect(state.records.at(-1)!.value).toMatch(/~all$/);

    // Our own DNS server (apps/dns, in the same process) serves them, and the authorisation record.
    const resolver = new Resolver({ timeout: 1000, tries: 2 });
    resolver.setServers([`127.0.0.1:${handle.service.dnsPort}`]);
    const served = async (name: string) =>
      (await resolver.resolveTxt(name).catch(() => [])).map((chunks) => chunks.join(""));
    for (
      let attempt = 0;
      attempt < 100 && (await served(state.records.at(-1)!.name)).length === 0;
      attempt++
    ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    for (const record of state.records) expect(await served(record.name)).toEqual([record.value]);
    expect(await served("example.com._report._dmarc.reports.ledger.example")).toEqual(["v=DMARC1"]);
  });

  it("keeps the audit trail: who submitted, and the process that computed", async () => {
    const history = (await handle.get("history?domain=example.com", key)).json as {
      records: { Event: string; CausedBy: string; Data: { added?: string[] } }[];
    };
    const events = history.records.map((record) => [record.Event, record.CausedBy.split(":")[0]]);
    expect(events).toEqual([
      ["DomainAdded", "key"],
      ["SpfOriginalUpdated", "key"],
      ["SafeSpfRecordComputed", "process"],
    ]);
    expect(history.records[2]!.Data.added!.length).toBeGreaterThan(0);

    // The same trail from the command line, read from the event store itself (PostgreSQL lets
    // the command run beside the service).
    const printed = await cli(backend.env, "history", "example.com");
    expect(printed.code, printed.err).toBe(0);
    const lines = printed.out.split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^0 {2}\S+Z {2}DomainAdded {2}by key:[0-9a-f]{16}: added to tenant /);
    expect(lines[1]).toContain("SpfOriginalUpdated  by key:");
    expect(lines[1]).toContain("include:_spf.gmail.test");
    expect(lines[2]).toMatch(
      /SafeSpfRecordComputed {2}by process:safe-spf: Safe SPF computed: \d+ records, lookups \d+ -> \d+/,
    );
    const unknown = await cli(backend.env, "history", "never-added.example.com");
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain("never added");
  });

  it("refuses an invalid record with 422 naming the term, and a foreign domain with 404", async () => {
    const invalid = await handle.put("update_safe_spf", key, {
      domain: "example.com",
      original: "v=spf1 ip4:999.1.1.1 -all",
    });
    expect(invalid.status).toBe(422);
    expect(invalid.json).toMatchObject({ status: "ERROR", code: "invalid_spf_record" });
    expect((invalid.json as { message: string }).message).toContain("ip4:999.1.1.1");
    const foreign = await handle.put("update_safe_spf", key, {
      domain: "not-ours.example.net",
      original: "v=spf1 -all",
    });
    expect(foreign.status).toBe(404);
    const missing = await handle.put("update_safe_spf", key, { domain: "example.com" });
    expect(missing.status).toBe(400);
  });

  it("reports a DNS timeout as a failure that will be retried, and keeps the original", async () => {
    const original = "v=spf1 include:silent.outlook.test -all";
    expect((await handle.put("update_safe_spf", key, { domain: "example.org", original })).status).toBe(200);
    const state = (await settled("example.org", original)).safe_spf!;
    expect(state.status).toBe("failed");
    expect(state.retrying).toBe(true);
    expect(state.last_error).toMatch(/^dns_timeout: /);
    expect(state.original).toBe(original);
  });
});
