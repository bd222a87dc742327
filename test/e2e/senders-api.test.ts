/**
 * GET aggregate_by_sender and PUT sender_approval over HTTP, checked against an independent
 * computation from the same report files (test/support/independent-senders.ts): grouping by
 * service, base domain, AS or unknown; approvals by service and by range; the audit trail;
 * tenant isolation; replay giving the same answers.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type SourceIpNaming, streams } from "@dmarc-ledger/events";
import { waitForProjections } from "@dmarc-ledger/projection-engine";
import { openRuntime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateCorpus } from "../support/corpus.js";
import {
  approvalKey,
  type ExpectedSender,
  expectedPolicyImpact,
  expectedSenders,
  readSenderRows,
  type SenderRow,
  type TestApprovals,
  type TestNaming,
  unknownSender,
} from "../support/independent-senders.js";
import {
  type Backend,
  cli,
  postgresBackend,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";
import { namedSourceIp } from "../support/source-ip-naming.js";

const aggregateFiles = [
  "!example.com!1538204542!1538463818.xml",
  "addisonfoods.com!example.com!1536105600!1536191999.xml",
  "example.net!example.com!1529366400!1529452799.xml",
  "ikea.com!example.de!1538690400!1538776800.xml",
  "protection.outlook.com!example.com!1711756800!1711843200.xml",
  "rfc9990-example.net!example.com!1700000000!1700086399.xml",
  "usssa.com!example.com!1538784000!1538870399.xml",
  "veeam.com!example.com!1530133200!1530219600.xml",
].map((name) => `${aggregateCorpus}${name}`);

/** Forwarding and dispositions the corpus lacks, on a subdomain of example.com (over two days). */
const forwardingReport = `<?xml version="1.0"?>
<feedback><report_metadata><org_name>mail.google.com</org_name><email>noreply@google.com</email>
<report_id>senders-test-1</report_id><date_range><begin>1700100000</begin><end>1700272799</end></date_range></report_metadata>
<policy_published><domain>news.example.com</domain><p>none</p></policy_published>
${[
  ["198.51.100.20", 40, "none", "fail", "fail", "<reason><type>forwarded</type></reason>"],
  ["198.51.100.20", 5, "none", "pass", "fail", ""],
  [
    "198.51.100.21",
    12,
    "none",
    "fail",
    "fail",
    "<reason><type>local_policy</type><comment>arc=pass</comment></reason>",
  ],
  ["198.51.100.22", 9, "quarantine", "fail", "fail", ""],
  ["198.51.100.23", 30, "none", "fail", "fail", ""],
  ["198.51.100.24", 8, "reject", "fail", "fail", "<reason><type>trusted_forwarder</type></reason>"],
  ["198.51.100.25", 3, "none", "fail", "fail", "<reason><type>mailing_list</type></reason>"],
  ["198.51.100.26", 21, "none", "fail", "pass", ""],
]
  .map(
    ([
      ip,
      count,
      disposition,
      dkim,
      spf,
      reason,
    ]) => `<record><row><source_ip>${ip}</source_ip><count>${count}</count>
<policy_evaluated><disposition>${disposition}</disposition><dkim>${dkim}</dkim><spf>${spf}</spf>${reason}</policy_evaluated></row>
<identifiers><header_from>news.example.com</header_from></identifiers>
<auth_results><spf><domain>news.example.com</domain><result>${spf}</result></spf></auth_results></record>`,
  )
  .join("\n")}
</feedback>`;

const period = "start=0&end=2000000000";
const sources = { serviceMap: "test-map", asnDatabase: "test-asn", countryDatabase: "test-country" };

/** The test's names for the sources: services shared by several IPs, base domains, ASes, none. */
function namingFor(ips: string[]): Map<string, { naming: SourceIpNaming; expected: TestNaming }> {
  const names = new Map<string, { naming: SourceIpNaming; expected: TestNaming }>();
  ips.forEach((ip, index) => {
    const asn = { number: 64_500 + (index % 3), organization: `Network ${index % 3}` };
    const country = ["US", "DE", "FR"][index % 3]!;
    const common = { asn: String(asn.number), organization: asn.organization, country };
    switch (index % 5) {
      case 0:
      case 1: {
        const service = { name: index % 2 ? "Mailer Two" : "Mailer One", type: "SaaS" };
        names.set(ip, {
          naming: { baseDomain: `mailer-${index}.example`, service, asn, country, sources },
          expected: { kind: "service", sender: service.name, type: service.type, ...common },
        });
        break;
      }
      case 2:
        names.set(ip, {
          naming: { baseDomain: "unmapped.example", service: null, asn, country, sources },
          expected: { kind: "base_domain", sender: "unmapped.example", type: "", ...common },
        });
        break;
      case 3:
        names.set(ip, {
          naming: { baseDomain: null, service: null, asn, country, sources },
          // Named by its AS's organisation, never a bare number.
          expected: { kind: "asn", sender: asn.organization, type: "", ...common },
        });
        break;
      default:
        break; // never resolved: unknown
    }
  });
  return names;
}

describe("the sender inventory over HTTP", () => {
  let backend: Backend;
  let handle: ServiceHandle;
  let acme: string;
  let other: string;
  let rows: SenderRow[];
  let names: Map<string, { naming: SourceIpNaming; expected: TestNaming }>;
  const approvals: TestApprovals = { services: new Map(), addresses: new Map() };
  const tmp = mkdtempSync(join(tmpdir(), "dl-senders-"));
  const ownerOf = (domain: string) => (domain === "domain.de" ? "domain.de" : "example.com");
  const expected = (filter: (row: SenderRow) => boolean = () => true): ExpectedSender[] =>
    expectedSenders(
      rows.filter(filter),
      ownerOf,
      (ip) => names.get(ip)?.expected ?? unknownSender,
      approvals,
    );
  const all = async (key: string, query = "") => {
    const records: unknown[] = [];
    const totals = new Set<unknown>();
    for (let page = 1; ; page++) {
      const response = await handle.get(`aggregate_by_sender?${period}${query}&page=${page}&per_page=3`, key);
      expect(response.status, response.body).toBe(200);
      const body = response.json as { total: number; records: unknown[] };
      totals.add(body.total);
      if (body.records.length === 0) return { records, totals };
      records.push(...body.records);
    }
  };

  beforeAll(async () => {
    backend = await postgresBackend();
    const forwardingFile = join(tmp, "forwarding.xml");
    writeFileSync(forwardingFile, forwardingReport);
    rows = [...aggregateFiles, forwardingFile]
      .flatMap((file) => readSenderRows(file))
      .filter(
        (row) =>
          row.domain === "domain.de" || row.domain === "example.com" || row.domain.endsWith(".example.com"),
      );
    const created = JSON.parse((await cli(backend.env, "tenant", "create", "acme", "--json")).out);
    acme = created.apiKey;
    other = JSON.parse((await cli(backend.env, "tenant", "create", "other", "--json")).out).apiKey;
    const imported = await cli(backend.env, "import", ...aggregateFiles, forwardingFile);
    expect(imported.code, imported.err).toBe(0);
    // The test's names, in place before the service starts: it names at first sight only the
    // sources nothing has named (an answer without a naming stays unknown).
    const sourceIps = [...new Set(rows.map((row) => row.sourceIp))].sort();
    names = namingFor(sourceIps);
    const before = await openRuntime(backend.env);
    let position = 0n;
    try {
      for (const ip of sourceIps) {
        const appended = await before.store.append(
          streams.sourceIp(ip),
          [namedSourceIp(ip, names.get(ip)?.naming ?? null)],
          "no_stream",
        );
        position = appended.position;
      }
    } finally {
      await before.close();
    }
    handle = await startTestService({
      ...backend.env,
      RATE_LIMIT_PER_SECOND: "100000",
      RATE_LIMIT_BURST: "100000",
    });
    for (const domain of ["example.com", "domain.de"]) {
      expect((await handle.put("add_domain", acme, { domain })).status).toBe(200);
    }
    expect((await handle.put("add_domain", other, { domain: "example.de" })).status).toBe(200);
    expect(await waitForProjections(handle.runtime.db, allProjections, position, 30_000)).toBe(true);
  });

  afterAll(async () => {
    await handle?.stop();
    await backend?.cleanup();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("groups every source under its service, base domain, AS or unknown, exactly", async () => {
    const want = expected();
    expect(new Set(want.map((record) => record.SenderKind))).toEqual(
      new Set(["service", "base_domain", "asn", "unknown"]),
    );
    expect(want.some((record) => Number(record.SourceIPs) > 1)).toBe(true);
    const { records, totals } = await all(acme);
    expect([...totals]).toEqual([want.length]);
    expect(records).toEqual(want);
    // One domain: its reports only.
    const domainDe = await handle.get(`aggregate_by_sender?${period}&domain=domain.de&per_page=1000`, acme);
    expect((domainDe.json as { records: unknown[] }).records).toEqual(
      expected((row) => row.domain === "domain.de"),
    );
  });

  it("carries the approvals of services and ranges, and audits them", async () => {
    const target = expected().find(
      (record) => record.SenderKind === "service" && record.Domain === "example.com",
    )!;
    expect(
      (
        await handle.put("sender_approval", acme, {
          domain: "example.com",
          service: target.Service,
          approved: "true",
        })
      ).status,
    ).toBe(200);
    approvals.services.set(approvalKey("example.com", target.Service), true);
    // A range refusing one of the forwarding report's addresses (written loosely: normalised).
    const response = await handle.put("sender_approval", acme, {
      domain: "example.com",
      range: "198.51.100.23/32",
      approved: "false",
    });
    expect(response.status, JSON.stringify(response.json)).toBe(200);
    approvals.addresses.set(approvalKey("example.com", "198.51.100.23"), false);
    expect((await all(acme)).records).toEqual(expected());
    expect(expected().some((record) => record.Approved === true)).toBe(true);

    const history = (await handle.get("history?domain=example.com", acme)).json as {
      records: { Event: string; Description?: string }[];
    };
    expect(history.records.filter((record) => record.Event === "SenderApprovalSet")).toHaveLength(2);

    // Cleared: back to undecided.
    expect(
      (
        await handle.put("sender_approval", acme, {
          domain: "example.com",
          service: target.Service,
          approved: "clear",
        })
      ).status,
    ).toBe(200);
    approvals.services.delete(approvalKey("example.com", target.Service));
    expect((await all(acme)).records).toEqual(expected());

    // Bad input and other tenants' domains.
    expect(
      (await handle.put("sender_approval", acme, { domain: "example.com", approved: "true" })).status,
    ).toBe(400);
    expect(
      (
        await handle.put("sender_approval", acme, {
          domain: "example.com",
          range: "300.1.2.3/8",
          approved: "true",
        })
      ).status,
    ).toBe(400);
    expect(
      (await handle.put("sender_approval", acme, { domain: "example.com", service: "X", approved: "maybe" }))
        .status,
    ).toBe(400);
    // "unknown" is whatever nothing names: neither approved nor refused as one, only cleared.
    for (const approved of ["true", "false"]) {
      const unknown = await handle.put("sender_approval", acme, {
        domain: "example.com",
        service: "unknown",
        approved,
      });
      expect(unknown).toMatchObject({ status: 400, json: { code: "invalid_parameter" } });
      expect(JSON.stringify(unknown.json)).toContain("IP range");
    }
    expect(
      (
        await handle.put("sender_approval", acme, {
          domain: "example.com",
          service: "unknown",
          approved: "clear",
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await handle.put("sender_approval", other, {
          domain: "example.com",
          service: target.Service,
          approved: "true",
        })
      ).status,
    ).toBe(404);
  });

  it("policy_impact: what p=quarantine and p=reject would stop, legitimate at risk and abuse, exactly", async () => {
    // An approved service and a refused address, as the rule reads them.
    const approvedService = expected().find((record) => record.SenderKind === "service")!.Service;
    expect(
      (
        await handle.put("sender_approval", acme, {
          domain: "example.com",
          service: approvedService,
          approved: "true",
        })
      ).status,
    ).toBe(200);
    approvals.services.set(approvalKey("example.com", approvedService), true);
    for (const policy of ["quarantine", "reject"] as const) {
      const want = expectedPolicyImpact(
        rows,
        policy,
        ownerOf,
        (ip) => names.get(ip)?.expected ?? unknownSender,
        approvals,
      );
      const got = (await handle.get(`policy_impact?${period}&policy=${policy}&per_page=1000`, acme)).json as {
        policy: string;
        total: number;
        totals: unknown;
        records: unknown[];
      };
      expect(got).toEqual({ status: "SUCCESS", policy, ...want });
      // Each part of the split is there to be checked.
      expect(Number(want.totals.LegitimateAtRisk)).toBeGreaterThan(0);
      expect(Number(want.totals.AbuseStopped)).toBeGreaterThan(0);
      expect(Number(want.totals.Forwarded)).toBeGreaterThan(0);
      // Paged, the same records and totals.
      const second = (await handle.get(`policy_impact?${period}&policy=${policy}&page=2&per_page=2`, acme))
        .json as {
        totals: unknown;
        records: unknown[];
      };
      expect(second.records).toEqual(want.records.slice(2, 4));
      expect(second.totals).toEqual(want.totals);
    }
    const quarantine = expectedPolicyImpact(
      rows,
      "quarantine",
      ownerOf,
      (ip) => names.get(ip)?.expected ?? unknownSender,
      approvals,
    );
    const reject = expectedPolicyImpact(
      rows,
      "reject",
      ownerOf,
      (ip) => names.get(ip)?.expected ?? unknownSender,
      approvals,
    );
    expect(Number(reject.totals.Stopped)).toBeGreaterThan(Number(quarantine.totals.Stopped));
    const one = (await handle.get(`policy_impact?${period}&policy=reject&domain=domain.de`, acme)).json as {
      records: unknown[];
    };
    expect(one.records).toEqual(
      expectedPolicyImpact(
        rows.filter((row) => row.domain === "domain.de"),
        "reject",
        ownerOf,
        (ip) => names.get(ip)?.expected ?? unknownSender,
        approvals,
      ).records,
    );
    expect((await handle.get(`policy_impact?${period}`, acme)).status).toBe(400);
    expect((await handle.get(`policy_impact?${period}&policy=none`, acme)).status).toBe(400);
    expect((await handle.get(`policy_impact?${period}&policy=reject&domain=example.com`, other)).status).toBe(
      404,
    );
  });

  it("dmarc-ledger senders prints the same records, as a table and as JSON", async () => {
    const want = expected();
    const json = await cli(backend.env, "senders", "acme", "--start", "0", "--end", "2000000000", "--json");
    expect(json.code, json.err).toBe(0);
    expect(JSON.parse(json.out)).toEqual(want);
    const shown = await cli(backend.env, "senders", "acme", "--start", "1970-01-01", "--end", "2033-05-18");
    expect(shown.code, shown.err).toBe(0);
    const lines = shown.out.split("\n");
    expect(lines[0]).toMatch(
      /^DOMAIN\s+SENDER\s+TYPE\s+ASN\s+CC\s+IPS\s+MESSAGES\s+DMARC\s+SPF\s+DKIM\s+APPROVED$/,
    );
    expect(lines.slice(2).map((line) => line.split(/\s{2,}/).slice(0, 2))).toEqual(
      want.map((record) => [record.Domain, record.Service]),
    );
    const refused = await cli(backend.env, "senders", "acme", "--domain", "example.de");
    expect(refused.code).not.toBe(0);
    expect(refused.err).toContain("not one of the tenant's domains");
  });

  it("moves a source's messages to its new sender when its name arrives after its reports", async () => {
    const resolve = async (ip: string, naming: SourceIpNaming) => {
      const appended = await handle.runtime.store.append(
        streams.sourceIp(ip),
        [namedSourceIp(ip, naming)],
        "any",
      );
      expect(await waitForProjections(handle.runtime.db, allProjections, appended.position, 30_000)).toBe(
        true,
      );
    };
    const volumeOf = (records: unknown[], domain: string, sender: string) =>
      Number(
        (records as ExpectedSender[]).find((r) => r.Domain === domain && r.Service === sender)?.Volume ?? 0,
      );
    const impactNow = async () =>
      (await handle.get(`policy_impact?${period}&policy=reject&per_page=1000`, acme)).json as {
        records: unknown[];
      };
    const impactWanted = () =>
      expectedPolicyImpact(
        rows,
        "reject",
        ownerOf,
        (ip) => names.get(ip)?.expected ?? unknownSender,
        approvals,
      );
    // A source of example.com no name has reached yet: answered as unknown, then named.
    const volumeByIp = new Map<string, number>();
    for (const row of rows.filter((r) => ownerOf(r.domain) === "example.com" && !names.has(r.sourceIp)))
      volumeByIp.set(row.sourceIp, (volumeByIp.get(row.sourceIp) ?? 0) + Number(row.count));
    const [ip, volume] = [...volumeByIp].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]!;
    expect(volume).toBeGreaterThan(0);
    const before = (await all(acme)).records;
    expect(before).toEqual(expected());
    const service = { name: "Late Mailer", type: "Email Provider" };
    const asn = { number: 64_999, organization: "Late Network" };
    await resolve(ip, { baseDomain: "late.example", service, asn, country: "NL", sources });
    names.set(ip, {
      naming: { baseDomain: "late.example", service, asn, country: "NL", sources },
      expected: {
        kind: "service",
        sender: service.name,
        type: service.type,
        asn: "64999",
        organization: asn.organization,
        country: "NL",
      },
    });
    const after = (await all(acme)).records;
    expect(after).toEqual(expected());
    expect(volumeOf(after, "example.com", "Late Mailer")).toBe(volume);
    expect(volumeOf(after, "example.com", "unknown")).toBe(
      volumeOf(before, "example.com", "unknown") - volume,
    );
    expect((await impactNow()).records).toEqual(impactWanted().records);
    // Named again (a later answer of the resolver): it moves again, nothing stays behind.
    const renamed = { name: "Mailer One", type: "SaaS" };
    await resolve(ip, { baseDomain: "late.example", service: renamed, asn, country: "NL", sources });
    names.set(ip, {
      naming: { baseDomain: "late.example", service: renamed, asn, country: "NL", sources },
      expected: {
        kind: "service",
        sender: renamed.name,
        type: renamed.type,
        asn: "64999",
        organization: asn.organization,
        country: "NL",
      },
    });
    const moved = (await all(acme)).records;
    expect(moved).toEqual(expected());
    expect(volumeOf(moved, "example.com", "Late Mailer")).toBe(0);
    expect(volumeOf(moved, "example.com", "Mailer One")).toBe(
      volumeOf(after, "example.com", "Mailer One") + volume,
    );
    expect((await impactNow()).records).toEqual(impactWanted().records);
  });

  it("shows a tenant only its own domains' senders", async () => {
    const theirs = (await all(other)).records as ExpectedSender[];
    expect(theirs.length).toBeGreaterThan(0);
    expect(new Set(theirs.map((record) => record.Domain))).toEqual(new Set(["example.de"]));
    expect((await handle.get(`aggregate_by_sender?${period}&domain=example.com`, other)).status).toBe(404);
  });

  it("gives the same answers after a replay", async () => {
    const impact = async () =>
      (await handle.get(`policy_impact?${period}&policy=reject&per_page=1000`, acme)).body;
    const before = (await all(acme)).records;
    const impactBefore = await impact();
    const replayed = await cli(backend.env, "replay");
    expect(replayed.code, replayed.err).toBe(0);
    expect((await all(acme)).records).toEqual(before);
    expect(await impact()).toBe(impactBefore);
  });
});
