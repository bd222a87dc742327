import { ConfigError } from "@dmarc-ledger/config";
import { createResolver } from "@dmarc-ledger/safe-spf";
import {
  type FixtureDnsServer,
  type FixtureZones,
  startFixtureDnsServer,
} from "@dmarc-ledger/safe-spf/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readDmarcRecord } from "../src/dmarc-record.js";
import { checkDomainStatus } from "../src/domain-status.js";
import { onboardingSettingsFromEnv } from "../src/settings.js";

const reportsDomain = "reports.ledger.test";
const safeSpfZone = "spf.ledger.test";
const authorised = (domain: string) => ({
  [`${domain}._report._dmarc.${reportsDomain}`]: [{ TXT: "v=DMARC1" }],
});

const zones: FixtureZones = {
  // A good setup: reports come here, our authorisation is served, SPF redirects to the root.
  "_dmarc.good.com": [
    {
      TXT: `v=DMARC1; p=reject; pct=100; rua=mailto:agg@${reportsDomain},mailto:dmarc@good.com; ruf=mailto:fail@${reportsDomain}!10m`,
    },
  ],
  ...authorised("good.com"),
  "good.com": [{ TXT: `v=spf1 redirect=good.com.${safeSpfZone}` }, { TXT: "google-site-verification=abc" }],
  [`good.com.${safeSpfZone}`]: [{ TXT: "v=spf1 ip4:192.0.2.0/24 -all" }],
  // The root reached through an include of an include.
  "_dmarc.nested.com": [{ TXT: `v=DMARC1; p=none; rua=mailto:agg@${reportsDomain}` }],
  ...authorised("nested.com"),
  "nested.com": [{ TXT: "v=spf1 include:_spf.nested.com -all" }],
  "_spf.nested.com": [{ TXT: `v=spf1 include:nested.com.${safeSpfZone} ~all` }],
  [`nested.com.${safeSpfZone}`]: [{ TXT: "v=spf1 ip4:198.51.100.0/24 -all" }],
  // Nothing set up at all.
  "missing.com": [{ A: "192.0.2.1" }],
  // Reports go to another vendor; SPF does not reach our root.
  "_dmarc.elsewhere.com": [{ TXT: "v=DMARC1; p=quarantine; pct=50; rua=mailto:d@other-vendor.net" }],
  ...authorised("elsewhere.com"),
  "elsewhere.com": [{ TXT: "v=spf1 include:_spf.vendor.net ~all" }],
  "_spf.vendor.net": [{ TXT: "v=spf1 ip4:203.0.113.0/24 -all" }],
  // Six includes of two lookups each: 18 lookups.
  "_dmarc.heavy.com": [{ TXT: `v=DMARC1; p=none; rua=mailto:agg@${reportsDomain}` }],
  ...authorised("heavy.com"),
  "heavy.com": [{ TXT: `v=spf1 ${[1, 2, 3, 4, 5, 6].map((n) => `include:s${n}.heavy.com`).join(" ")} -all` }],
  ...Object.fromEntries([1, 2, 3, 4, 5, 6].map((n) => [`s${n}.heavy.com`, [{ TXT: "v=spf1 a mx ?all" }]])),
  // A broken DMARC record and two SPF records.
  "_dmarc.broken.com": [{ TXT: "v=DMARC1; p=block; rua=https://example.net/reports" }],
  "broken.com": [{ TXT: "v=spf1 -all" }, { TXT: "v=spf1 ip4:192.0.2.1 -all" }],
  // A subdomain under good.com's record.
  "news.good.com": [{ TXT: `v=spf1 redirect=news.good.com.${safeSpfZone}` }],
  [`news.good.com.${safeSpfZone}`]: [{ TXT: "v=spf1 -all" }],
  // A DMARC zone that does not answer.
  "_dmarc.slow.com": ["TIMEOUT"],
};

describe("the onboarding check, from DNS", () => {
  let dns: FixtureDnsServer;
  const check = (domain: string) =>
    checkDomainStatus(domain, {
      resolver: createResolver({ nameservers: [dns.address], timeoutMs: 200, retries: 0 }),
      reportsDomain,
      safeSpfZone,
    });

  beforeAll(async () => {
    dns = await startFixtureDnsServer(zones);
  });
  afterAll(async () => {
    await dns?.close();
  });

  it("finds nothing to change in a good setup", async () => {
    const status = await check("good.com");
    expect(status.problems).toEqual([]);
    expect(status.dmarc).toMatchObject({
      present: true,
      valid: true,
      policy: "reject",
      pct: 100,
      rua: [`mailto:agg@${reportsDomain}`, "mailto:dmarc@good.com"],
      ruf: [`mailto:fail@${reportsDomain}!10m`],
      rua_points_here: true,
      ruf_points_here: true,
    });
    expect(status.authorization).toEqual({ name: `good.com._report._dmarc.${reportsDomain}`, served: true });
    expect(status.spf).toMatchObject({
      present: true,
      record: `v=spf1 redirect=good.com.${safeSpfZone}`,
      safe_spf_root: `good.com.${safeSpfZone}`,
      reaches_safe_spf_root: true,
      via: "redirect",
      lookups: 1,
    });
  });

  it("reads a subdomain's policy from its organisational domain when it has none", async () => {
    const status = await check("news.good.com");
    expect(status.problems).toEqual([]);
    expect(status.dmarc).toMatchObject({
      name: "_dmarc.good.com",
      inherited_from: "good.com",
      policy: "reject",
      rua_points_here: true,
    });
    expect(status.authorization.name).toBe(`good.com._report._dmarc.${reportsDomain}`);
  });

  it("follows includes to the root and counts their lookups", async () => {
    const status = await check("nested.com");
    expect(status.problems).toEqual([]);
    expect(status.spf).toMatchObject({ reaches_safe_spf_root: true, via: "include", lookups: 2 });
  });

  it("says what to publish for a domain with nothing set up", async () => {
    const status = await check("missing.com");
    expect(status.dmarc).toMatchObject({ present: false, valid: false, rua_points_here: false });
    expect(status.authorization.served).toBe(false);
    expect(status.problems.map((p) => p.code)).toEqual([
      "dmarc_missing",
      "authorization_missing",
      "spf_missing",
    ]);
    expect(status.problems[0]!.message).toBe(
      `Publish a TXT record at _dmarc.missing.com: "v=DMARC1; p=none; rua=mailto:<address>@${reportsDomain}".`,
    );
    expect(status.problems[2]!.message).toBe(
      `Publish a TXT record at missing.com: "v=spf1 redirect=missing.com.${safeSpfZone}".`,
    );
  });

  it("points out reports sent elsewhere and SPF that does not reach the root", async () => {
    const status = await check("elsewhere.com");
    expect(status.dmarc).toMatchObject({
      valid: true,
      policy: "quarantine",
      pct: 50,
      rua_points_here: false,
    });
    expect(status.spf).toMatchObject({ reaches_safe_spf_root: false, via: null, lookups: 1 });
    expect(status.problems.map((p) => p.code)).toEqual(["rua_elsewhere", "spf_not_safe_spf"]);
    expect(status.problems[0]!.message).toContain(`Add mailto:<address>@${reportsDomain} to the rua tag`);
    expect(status.problems[1]!.message).toContain(`"v=spf1 redirect=elsewhere.com.${safeSpfZone}"`);
  });

  it("counts the lookups of the whole tree and flags more than ten", async () => {
    const status = await check("heavy.com");
    expect(status.spf.lookups).toBe(18);
    expect(status.problems.map((p) => p.code)).toEqual(["spf_not_safe_spf", "spf_too_many_lookups"]);
    expect(status.problems[1]!.message).toMatch(/needs 18 DNS lookups/);
  });

  it("explains an invalid DMARC record, several SPF records and a DNS timeout", async () => {
    const broken = await check("broken.com");
    expect(broken.dmarc).toMatchObject({
      present: true,
      valid: false,
      error: "p=block is not none, quarantine or reject",
    });
    expect(broken.problems.map((p) => p.code)).toEqual([
      "dmarc_invalid",
      "rua_elsewhere",
      "authorization_missing",
      "spf_several",
    ]);
    const slow = await check("slow.com");
    expect(slow.problems[0]).toMatchObject({ code: "dmarc_unreadable" });
    expect(slow.problems[0]!.message).toContain("(timeout)");
  });
});

describe("DMARC record reading", () => {
  it("reads tags case-insensitively and defaults pct to 100", () => {
    expect(readDmarcRecord("v=DMARC1;P=Quarantine; SP=reject")).toMatchObject({
      valid: true,
      policy: "quarantine",
      subdomainPolicy: "reject",
      pct: 100,
    });
    expect(readDmarcRecord("v=DMARC1; p=none; pct=150").error).toBe("pct=150 is not a number from 0 to 100");
    expect(readDmarcRecord("v=DMARC1; rua=mailto:a@b.example").error).toBe("it has no p= tag");
  });
});

describe("onboarding settings", () => {
  it("takes host names and names every wrong variable", () => {
    expect(
      onboardingSettingsFromEnv({ REPORTS_DOMAIN: "Reports.Ledger.Test.", SAFE_SPF_ZONE: "spf.x.test" }),
    ).toEqual({
      reportsDomain: "reports.ledger.test",
      safeSpfZone: "spf.x.test",
      nameservers: null,
      timeoutMs: 2000,
    });
    expect(() =>
      onboardingSettingsFromEnv({ REPORTS_DOMAIN: "not a domain", DNS_TIMEOUT_MS: "soon" }),
    ).toThrow(ConfigError);
  });
});

describe("the onboarding check of a domain's TLS-RPT record (RFC 8460 §3)", () => {
  let dns: FixtureDnsServer;
  const check = (domain: string, reports: string | null = reportsDomain) =>
    checkDomainStatus(domain, {
      resolver: createResolver({ nameservers: [dns.address], timeoutMs: 200, retries: 0 }),
      reportsDomain: reports,
      safeSpfZone,
    });

  beforeAll(async () => {
    dns = await startFixtureDnsServer({
      "_smtp._tls.here.com": [{ TXT: `v=TLSRPTv1; rua=mailto:tls@${reportsDomain}` }],
      "_smtp._tls.elsewhere.com": [
        { TXT: "v=TLSRPTv1;rua=mailto:tlsrpt@other-vendor.net,https://reports.other-vendor.net/v1" },
      ],
      "_smtp._tls.broken.com": [{ TXT: "v=TLSRPTv1; rua=ftp://reports.example.net" }],
      "_smtp._tls.twice.com": [
        { TXT: "v=TLSRPTv1; rua=mailto:a@example.net" },
        { TXT: "v=TLSRPTv1; rua=mailto:b@example.net" },
      ],
      "_smtp._tls.slow.com": ["TIMEOUT"],
      "missing.com": [{ A: "192.0.2.1" }],
    });
  });
  afterAll(async () => {
    await dns?.close();
  });

  it("finds TLS reports coming here, and asks for nothing", async () => {
    const status = await check("here.com");
    expect(status.tls_rpt).toEqual({
      name: "_smtp._tls.here.com",
      record: `v=TLSRPTv1; rua=mailto:tls@${reportsDomain}`,
      present: true,
      valid: true,
      error: null,
      rua: [`mailto:tls@${reportsDomain}`],
      rua_points_here: true,
      publish: null,
    });
    expect(status.problems.filter((p) => p.code.startsWith("tlsrpt"))).toEqual([]);
  });

  it("says what to publish when there is no record, or it sends reports elsewhere", async () => {
    expect((await check("missing.com")).tls_rpt).toMatchObject({
      present: false,
      rua_points_here: false,
      publish: `v=TLSRPTv1; rua=mailto:<address>@${reportsDomain}`,
    });
    const elsewhere = await check("elsewhere.com");
    expect(elsewhere.tls_rpt).toMatchObject({
      valid: true,
      rua: ["mailto:tlsrpt@other-vendor.net", "https://reports.other-vendor.net/v1"],
      rua_points_here: false,
      publish: `v=TLSRPTv1; rua=mailto:<address>@${reportsDomain},mailto:tlsrpt@other-vendor.net,https://reports.other-vendor.net/v1`,
    });
    expect(elsewhere.problems.filter((p) => p.code.startsWith("tlsrpt"))).toEqual([]);
    expect((await check("missing.com", null)).tls_rpt.rua_points_here).toBeNull();
  });

  it("names a broken record, two records and an unreadable name as problems, with the fix", async () => {
    const broken = await check("broken.com");
    expect(broken.tls_rpt).toMatchObject({
      valid: false,
      error: 'rua "ftp://reports.example.net" is neither a mailto: nor an https: URI',
    });
    expect(broken.problems).toContainEqual({
      code: "tlsrpt_invalid",
      message: `Fix the TLS-RPT record at _smtp._tls.broken.com (rua "ftp://reports.example.net" is neither a mailto: nor an https: URI): "v=TLSRPTv1; rua=mailto:<address>@${reportsDomain}".`,
    });
    expect((await check("twice.com")).problems.map((p) => p.code)).toContain("tlsrpt_several");
    expect((await check("slow.com")).problems.map((p) => p.code)).toContain("tlsrpt_unreadable");
  });
});
