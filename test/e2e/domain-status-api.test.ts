import {
  type FixtureDnsServer,
  type FixtureZones,
  startFixtureDnsServer,
} from "@dmarc-ledger/safe-spf/testing";
import { reverseName } from "@dmarc-ledger/source-names";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateReport, appendAggregateReports } from "../support/aggregate-report.js";
import {
  type Backend,
  cli,
  postgresBackend,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";

const reportsDomain = "reports.ledger.test";
const safeSpfZone = "spf.ledger.test";

const zones: FixtureZones = {
  "_dmarc.good.com": [{ TXT: `v=DMARC1; p=reject; rua=mailto:agg@${reportsDomain}` }],
  [`good.com._report._dmarc.${reportsDomain}`]: [{ TXT: "v=DMARC1" }],
  "good.com": [{ TXT: `v=spf1 redirect=good.com.${safeSpfZone}` }],
  [`good.com.${safeSpfZone}`]: [{ TXT: "v=spf1 ip4:192.0.2.0/24 -all" }],
  "_dmarc.bare.com": [{ TXT: "v=DMARC1; p=none; rua=mailto:dmarc@other-vendor.net" }],
  "bare.com": [{ TXT: "v=spf1 include:_spf.other-vendor.net -all" }],
  "_spf.other-vendor.net": [{ TXT: "v=spf1 ip4:203.0.113.0/24 -all" }],
  // Report sources: one forward-confirmed, one whose PTR claims a name that does not point back.
  [reverseName("192.0.2.10")]: [{ PTR: "outbound.mailer.net" }],
  "outbound.mailer.net": [{ A: "192.0.2.10" }],
  [reverseName("192.0.2.66")]: [{ PTR: "mail.good.com" }],
  "mail.good.com": [{ A: "192.0.2.1" }],
};

describe("GET domain_status, dmarc-ledger domain status, and SourceDomain over HTTP", () => {
  let dns: FixtureDnsServer;
  let backend: Backend;
  let handle: ServiceHandle;
  let env: NodeJS.ProcessEnv;
  let key: string;
  let otherKey: string;

  beforeAll(async () => {
    dns = await startFixtureDnsServer(zones);
    backend = await postgresBackend();
    env = {
      ...backend.env,
      DNS_NAMESERVERS: dns.address,
      DNS_TIMEOUT_MS: "300",
      REPORTS_DOMAIN: reportsDomain,
      SAFE_SPF_ZONE: safeSpfZone,
    };
    key = JSON.parse((await cli(env, "tenant", "create", "acme", "--json")).out).apiKey;
    otherKey = JSON.parse((await cli(env, "tenant", "create", "other", "--json")).out).apiKey;
    handle = await startTestService(env);
    for (const domain of ["good.com", "bare.com"])
      expect((await handle.put("add-domain", key, { domain })).status).toBe(200);
    expect((await handle.put("add-domain", otherKey, { domain: "others.com" })).status).toBe(200);
  });

  afterAll(async () => {
    await handle?.stop();
    await backend?.cleanup();
    await dns?.close();
  });

  it("answers a good setup with nothing to change, in the documented shape", async () => {
    const response = await handle.get("domain_status?domain=Good.com", key);
    expect(response.status).toBe(200);
    const body = response.json as Record<string, unknown>;
    expect(body).toMatchObject({
      status: "SUCCESS",
      domain: "good.com",
      ok: true,
      problems: [],
      dmarc: { present: true, valid: true, policy: "reject", pct: 100, rua_points_here: true },
      authorization: { served: true },
      spf: { reaches_safe_spf_root: true, via: "redirect", lookups: 1 },
    });

    const doc = (await handle.get("openapi.json", key)).json as {
      paths: Record<string, { get: { parameters: { name: string }[] } }>;
      components: { schemas: Record<string, object> };
    };
    expect(doc.paths["/domain_status"]!.get.parameters.map((p) => p.name)).toEqual(["domain"]);
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    const validate = ajv.compile(doc.components.schemas.Response_domain_status!);
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
    const problems = (await handle.get("domain_status?domain=bare.com", key)).json;
    expect(validate(problems), JSON.stringify(validate.errors)).toBe(true);
  });

  it("lists what to change for a domain set up for another vendor", async () => {
    const body = (await handle.get("domain_status?domain=bare.com", key)).json as {
      ok: boolean;
      problems: { code: string; message: string }[];
    };
    expect(body.ok).toBe(false);
    expect(body.problems.map((p) => p.code)).toEqual([
      "rua_elsewhere",
      "authorization_missing",
      "spf_not_safe_spf",
    ]);
  });

  it("answers errors as the contract says", async () => {
    const foreign = await handle.get("domain_status?domain=others.com", key);
    expect(foreign.status).toBe(404);
    expect(foreign.json).toMatchObject({ status: "ERROR", code: "unknown_domain" });
    expect((await handle.get("domain_status?domain=never-added.com", key)).status).toBe(404);
    const missing = await handle.get("domain_status", key);
    expect(missing.status).toBe(400);
    expect(missing.json).toMatchObject({ code: "invalid_parameter" });
    expect((await handle.get("domain_status?domain=good.com&x=1", key)).status).toBe(400);
    expect((await handle.get("domain_status?domain=good.com", "dlk_global_wrong")).status).toBe(401);
  });

  it("prints the same check on the command line, exit status 2 while something is to change", async () => {
    const good = await cli(env, "domain", "status", "good.com");
    expect(good.code).toBe(0);
    expect(good.out).toContain("Nothing to change.");
    const bare = await cli(env, "domain", "status", "bare.com");
    expect(bare.code).toBe(2);
    expect(bare.out).toContain(`  - Add mailto:<address>@${reportsDomain} to the rua tag of _dmarc.bare.com`);
    const json = await cli(env, "domain", "status", "bare.com", "--json");
    expect(JSON.parse(json.out).spf.lookups).toBe(1);
  });

  it("says what it could not check, and ends with status 1, when its environment lacks a setting", async () => {
    const dnsOnly = { DNS_NAMESERVERS: dns.address, DNS_TIMEOUT_MS: "300" };
    const nothing = await cli(dnsOnly, "domain", "status", "good.com");
    expect(nothing.code).toBe(1);
    expect(nothing.out).toContain("rua here:          not checked (REPORTS_DOMAIN is not set)");
    expect(nothing.out).toContain("Safe SPF root:     not checked (SAFE_SPF_ZONE is not set)");
    expect(nothing.out).not.toContain("Nothing to change.");
    expect(nothing.err).toContain("error: not checked: whether rua and ruf reach our reports domain");
    expect(nothing.err).toContain("(SAFE_SPF_ZONE is not set)");
    // One part missing is enough, with --json too.
    const noZone = await cli(
      { ...dnsOnly, REPORTS_DOMAIN: reportsDomain },
      "domain",
      "status",
      "good.com",
      "--json",
    );
    expect(noZone.code).toBe(1);
    expect(JSON.parse(noZone.out).spf.reaches_safe_spf_root).toBeNull();
    expect(noZone.err).toContain("(SAFE_SPF_ZONE is not set)");
    expect(noZone.err).not.toContain("REPORTS_DOMAIN");
  });

  it("shows SourceDomain from forward-confirmed reverse DNS in the by-source records", async () => {
    const day = Math.floor(Date.now() / 1000) - 3 * 86_400;
    await appendAggregateReports(handle.runtime.store, [
      aggregateReport({
        identity: "status-sources",
        domain: "good.com",
        organization: "google.com",
        begin: day,
        end: day + 3_600,
        rows: [
          { sourceIp: "192.0.2.10", count: 5, disposition: "none", policyDkim: "pass", policySpf: "pass" },
          { sourceIp: "192.0.2.66", count: 3, disposition: "none", policyDkim: "fail", policySpf: "fail" },
        ],
      }),
    ]);
    const path = `aggregate_by_source?start=${day - 10}`;
    const deadline = Date.now() + 30_000;
    let records: { SourceIp: string; SourceDomain: string }[] = [];
    while (Date.now() < deadline) {
      records = ((await handle.get(path, key)).json as { records: typeof records }).records;
      if (records.some((record) => record.SourceDomain !== "")) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(records.map((r) => [r.SourceIp, r.SourceDomain])).toEqual([
      ["192.0.2.10", "mailer.net"],
      ["192.0.2.66", ""],
    ]);
    const unaligned = (await handle.get(`aggregate_by_unaligned_source?start=${day - 10}`, key)).json as {
      records: typeof records;
    };
    expect(unaligned.records.map((r) => [r.SourceIp, r.SourceDomain])).toEqual([["192.0.2.66", ""]]);
  });
});
