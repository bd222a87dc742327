import { BlockList, isIPv4 } from "node:net";
import {
  type AlertsSettings,
  addEndpoint,
  alertsSettings,
  type RunningAlerts,
  setAlertRule,
  startAlerts,
} from "@dmarc-ledger/alerts";
import { parseSettings } from "@dmarc-ledger/config";
import { type AggregateReportReceived, newEvent, type SourceIpNaming, streams } from "@dmarc-ledger/events";
import { type RunningProjector, startProjector } from "@dmarc-ledger/projection-engine";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { addDomain, createTenant, setSenderApproval } from "@dmarc-ledger/tenancy";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateReport, appendAggregateReports, type TestRow } from "../support/aggregate-report.js";
import { type Backend, postgresBackend } from "../support/service-harness.js";
import { eventually, startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";

const day = 86_400;
const today = Math.floor(Date.now() / 1000 / day) * day;
const sources = { serviceMap: "test", asnDatabase: "test", countryDatabase: "test" };

function rows(spec: [ip: string, count: number, passes: boolean][]): TestRow[] {
  return spec.map(([sourceIp, count, passes]) => ({
    sourceIp,
    count,
    disposition: "none",
    policyDkim: passes ? "pass" : "fail",
    policySpf: passes ? "pass" : "fail",
  }));
}

/** What names each source IP in this test, and so who its sender is. */
const naming: Record<string, { service?: string; baseDomain?: string; asn: number }> = {
  "192.0.2.10": { service: "Good Mail", baseDomain: "goodmail.example", asn: 64501 },
  "192.0.2.20": { service: "Bad Mail", baseDomain: "badmail.example", asn: 64502 },
  "192.0.2.21": { service: "Bad Mail", baseDomain: "badmail.example", asn: 64502 },
  "198.51.100.9": { baseDomain: "rangey.example", asn: 64503 },
  "198.51.100.70": { baseDomain: "rangey.example", asn: 64503 },
  "203.0.113.5": { asn: 64500 },
  "203.0.113.6": { asn: 64500 },
};
const senderOf = (ip: string) => {
  const name = naming[ip]!;
  return name.service ?? name.baseDomain ?? `AS${name.asn}`;
};
const namingEvent = (ip: string) => {
  const name = naming[ip]!;
  const value: SourceIpNaming = {
    baseDomain: name.baseDomain ?? null,
    service: name.service ? { name: name.service, type: "ESP" } : null,
    asn: { number: name.asn, organization: `Org ${name.asn}` },
    country: "US",
    sources,
  };
  return newEvent(
    "SourceIpResolved",
    {
      ip,
      outcome: name.baseDomain ? "found" : "nxdomain",
      ptrNames: name.baseDomain ? [`mx.${name.baseDomain}`] : [],
      name: name.baseDomain ? `mx.${name.baseDomain}` : null,
      confirmed: Boolean(name.baseDomain),
      resolvedAt: new Date().toISOString(),
      naming: value,
    },
    { causedBy: "test" },
  );
};

/**
 * The (sender, day) pairs unapproved_sender must name, computed apart from the evaluator: the
 * failing messages per sender and report day of the addresses not approved (the most specific
 * decided range holding the address, else the decision on its sender), at least `minFailed`.
 */
function expectedAlerts(
  reports: AggregateReportReceived[],
  decisions: { services: Record<string, boolean>; ranges: [cidr: string, approved: boolean][] },
  minFailed: number,
): string[] {
  const approvedOf = (ip: string): boolean | null => {
    const holding = decisions.ranges
      .filter(([cidr]) => {
        const [network, bits] = cidr.split("/");
        const list = new BlockList();
        list.addSubnet(network!, Number(bits), isIPv4(network!) ? "ipv4" : "ipv6");
        return list.check(ip, isIPv4(ip) ? "ipv4" : "ipv6");
      })
      .sort((a, b) => Number(b[0].split("/")[1]) - Number(a[0].split("/")[1]));
    if (holding.length > 0) return holding[0]![1];
    return decisions.services[senderOf(ip)] ?? null;
  };
  const failed = new Map<string, number>();
  for (const report of reports) {
    const reportDay = new Date(report.begin * 1000).toISOString().slice(0, 10);
    for (const row of report.rows) {
      if (row.policyDkim === "pass" || row.policySpf === "pass") continue;
      if (approvedOf(row.sourceIp) === true) continue;
      const key = `${senderOf(row.sourceIp)}|${reportDay}`;
      failed.set(key, (failed.get(key) ?? 0) + row.count);
    }
  }
  return [...failed]
    .filter(([, n]) => n >= minFailed)
    .map(([key]) => key)
    .sort();
}

interface Body {
  data: {
    tenantId: string;
    rule: string;
    domain: string | null;
    period: { start: string; key: string };
    figures: Record<string, unknown>;
  };
}
const unapproved = (receiver: WebhookReceiver) =>
  receiver.attempts
    .filter((attempt) => attempt.accepted)
    .map((attempt) => JSON.parse(attempt.body) as Body)
    .filter((body) => body.data.rule === "unapproved_sender");
const pairs = (bodies: Body[]) =>
  bodies.map((body) => `${body.data.figures.sender}|${body.data.period.start.slice(0, 10)}`).sort();

describe("unapproved senders failing DMARC", () => {
  let backend: Backend;
  let runtime: Runtime;
  let projector: RunningProjector;
  let alerts: RunningAlerts;
  let settings: AlertsSettings;
  let tenantA: string;
  let tenantB: string;
  let receiverA: WebhookReceiver;
  let receiverB: WebhookReceiver;
  const decisions = {
    services: { "Good Mail": true },
    ranges: [
      ["198.51.100.64/26", true],
      ["198.51.100.0/24", false],
    ] as [string, boolean][],
  };
  const baseline = (identity: string, domain: string) =>
    aggregateReport({
      identity,
      domain,
      organization: "google.com",
      begin: today - 2 * day,
      end: today - day - 1,
      rows: rows([["192.0.2.10", 50, true]]),
    });
  const yesterday = (identity: string, domain: string, spec: [string, number, boolean][]) =>
    aggregateReport({
      identity,
      domain,
      organization: "yahoo.com",
      begin: today - day,
      end: today - 1,
      rows: rows(spec),
    });
  const todays = (identity: string, domain: string, spec: [string, number, boolean][]) =>
    aggregateReport({
      identity,
      domain,
      organization: "yahoo.com",
      begin: today,
      end: today + day - 1,
      rows: rows(spec),
    });

  beforeAll(async () => {
    backend = await postgresBackend();
    runtime = await openRuntime(backend.env);
    settings = parseSettings(alertsSettings, { WEBHOOK_ALLOW_PRIVATE_ADDRESSES: "yes" });
    const meta = { causedBy: "test" };
    tenantA = (await createTenant(runtime.store, { name: "A", region: "global" }, meta)).tenantId;
    tenantB = (await createTenant(runtime.store, { name: "B", region: "global" }, meta)).tenantId;
    await addDomain(runtime.store, { tenantId: tenantA, domain: "gamma-example.com" }, meta);
    await addDomain(runtime.store, { tenantId: tenantB, domain: "delta-example.com" }, meta);
    for (const [service, approved] of Object.entries(decisions.services)) {
      await setSenderApproval(
        runtime.store,
        { tenantId: tenantA, domain: "gamma-example.com", service, approved },
        meta,
      );
    }
    for (const [range, approved] of decisions.ranges) {
      await setSenderApproval(
        runtime.store,
        { tenantId: tenantA, domain: "gamma-example.com", range, approved },
        meta,
      );
    }
    // B's own threshold: 5 failing messages a day.
    await setAlertRule(
      runtime.store,
      { tenantId: tenantB, rule: "unapproved_sender", enabled: true, params: { min_failed: 5 } },
      meta,
    );
    receiverA = await startWebhookReceiver();
    receiverB = await startWebhookReceiver();
    for (const [tenantId, receiver] of [
      [tenantA, receiverA],
      [tenantB, receiverB],
    ] as const) {
      receiver.secret = (
        await addEndpoint(
          runtime.store,
          runtime.db,
          { tenantId, url: receiver.url, alertTypes: ["unapproved_sender"] },
          meta,
          { allowPrivate: true },
        )
      ).secret;
    }
    projector = startProjector({ store: runtime.store, db: runtime.db, projections: allProjections });
    alerts = startAlerts({ store: runtime.store, db: runtime.db, settings, publishPollMs: 20 });
  });

  afterAll(async () => {
    await alerts?.stop();
    await projector?.stop();
    await receiverA?.close();
    await receiverB?.close();
    await runtime?.close();
    await backend?.cleanup();
  });

  it("raises one alert per (domain, sender, day), for addresses named before or after their report", async () => {
    // Every address but 203.0.113.5 is named before the reports; that one after.
    for (const ip of Object.keys(naming).filter((ip) => ip !== "203.0.113.5")) {
      await runtime.store.append(streams.sourceIp(ip), [namingEvent(ip)], "no_stream");
    }
    const reportsA = [
      baseline("g-1", "gamma-example.com"),
      yesterday("g-2", "gamma-example.com", [
        ["192.0.2.10", 5, false], // Good Mail: approved
        ["192.0.2.20", 3, false], // Bad Mail: undecided
        ["192.0.2.21", 4, false], // Bad Mail again: the same alert
        ["198.51.100.70", 6, false], // approved by its /26
        ["198.51.100.9", 2, false], // refused by its /24
        ["203.0.113.5", 7, false], // named later
        ["203.0.113.6", 9, true], // passes
      ]),
      // The same senders the next day: an alert each for that day; Bad Mail a second time that day.
      todays("g-3", "gamma-example.com", [["192.0.2.20", 1, false]]),
      todays("g-4", "gamma-example.com", [
        ["192.0.2.21", 2, false],
        ["192.0.2.10", 8, false],
      ]),
    ];
    const reportsB = [
      baseline("d-1", "delta-example.com"),
      yesterday("d-2", "delta-example.com", [["192.0.2.20", 3, false]]), // under B's 5
      todays("d-3", "delta-example.com", [
        ["192.0.2.20", 4, false],
        ["192.0.2.21", 2, false],
      ]),
    ];
    await appendAggregateReports(runtime.store, [...reportsA, ...reportsB]);
    const beforeNaming = expectedAlerts(
      reportsA,
      { ...decisions, services: { ...decisions.services, [senderOf("203.0.113.5")]: true } },
      1,
    );
    await eventually(() => unapproved(receiverA).length >= beforeNaming.length, "the named senders' alerts");
    await runtime.store.append(streams.sourceIp("203.0.113.5"), [namingEvent("203.0.113.5")], "no_stream");

    const wantA = expectedAlerts(reportsA, decisions, 1);
    const wantB = expectedAlerts(reportsB, { services: {}, ranges: [] }, 5);
    expect(wantA).toContain(`AS64500|${new Date((today - day) * 1000).toISOString().slice(0, 10)}`);
    expect(wantB).toHaveLength(1);
    await eventually(
      () => unapproved(receiverA).length >= wantA.length && unapproved(receiverB).length >= wantB.length,
      "every unapproved sender's alert",
    );
    await new Promise((resolve) => setTimeout(resolve, 500));

    const gotA = unapproved(receiverA);
    expect(pairs(gotA)).toEqual(wantA);
    expect(
      gotA.every((body) => body.data.tenantId === tenantA && body.data.domain === "gamma-example.com"),
    ).toBe(true);
    const gotB = unapproved(receiverB);
    expect(pairs(gotB)).toEqual(wantB);
    expect(gotB.every((body) => body.data.tenantId === tenantB)).toBe(true);
    expect(receiverA.attempts.every((attempt) => attempt.verified === true)).toBe(true);
    // The refused range's sender says so.
    const refused = gotA.find((body) => body.data.figures.sender === "rangey.example");
    expect(refused?.data.figures.approved).toBe(false);
  });
});
