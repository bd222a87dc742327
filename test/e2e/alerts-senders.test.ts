import { BlockList, isIPv4 } from "node:net";
import {
  type AlertsSettings,
  addEndpoint,
  alertsSettings,
  decideUnnamedSenders,
  type RunningAlerts,
  setAlertRule,
  startAlerts,
} from "@dmarc-ledger/alerts";
import { parseSettings } from "@dmarc-ledger/config";
import { type AggregateReportReceived, newEvent, type SourceIpNaming, streams } from "@dmarc-ledger/events";
import { type RunningProjector, startProjector } from "@dmarc-ledger/projection-engine";
import { openRuntime, type Runtime, runtimeDataKeys } from "@dmarc-ledger/runtime";
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
  // new_sender by name (the second test); 203.0.113.8 is never named.
  "192.0.2.11": { service: "Good Mail", baseDomain: "goodmail.example", asn: 64501 },
  "192.0.2.22": { service: "Bad Mail", baseDomain: "badmail.example", asn: 64502 },
  "192.0.2.30": { service: "Fresh Mail", baseDomain: "freshmail.example", asn: 64504 },
  "198.51.100.71": { baseDomain: "rangey.example", asn: 64503 },
  "203.0.113.7": { asn: 64500 },
};
/** The AS's organisation each naming event gives: a sender with no service is known by it. */
const organizationOf = (asn: number) => `Org ${asn}`;
const senderOf = (ip: string) => {
  const name = naming[ip]!;
  return name.service ?? name.baseDomain ?? organizationOf(name.asn);
};
const namingEvent = (ip: string) => {
  const name = naming[ip]!;
  const value: SourceIpNaming = {
    baseDomain: name.baseDomain ?? null,
    service: name.service ? { name: name.service, type: "ESP" } : null,
    asn: { number: name.asn, organization: organizationOf(name.asn) },
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

/**
 * The keys new_sender must raise, computed apart from the evaluator: each report's addresses
 * after the domain's first, by their service or base domain when they have one, else by the
 * address, less those the first report had; whatever order the names came in.
 */
function expectedNewSenders(reports: AggregateReportReceived[]): string[] {
  const keyOf = (ip: string) => {
    const name = naming[ip];
    if (name?.service) return `sender:${name.service}`;
    if (name?.baseDomain) return `sender:${name.baseDomain}`;
    return `ip:${ip}`;
  };
  const [first, ...rest] = reports;
  const baseline = new Set(first!.rows.map((row) => keyOf(row.sourceIp)));
  const keys = new Set(rest.flatMap((report) => report.rows.map((row) => keyOf(row.sourceIp))));
  return [...keys].filter((key) => !baseline.has(key)).sort();
}

interface Body {
  data: {
    alertId: string;
    tenantId: string;
    rule: string;
    domain: string | null;
    period: { start: string; key: string };
    figures: Record<string, unknown>;
    items: Record<string, unknown>[];
    revises: string | null;
  };
}
const unapproved = (receiver: WebhookReceiver) =>
  receiver.attempts
    .filter((attempt) => attempt.accepted)
    .map((attempt) => JSON.parse(attempt.body) as Body)
    .filter((body) => body.data.rule === "unapproved_sender");
/** Each sender an alert lists, with its report day: a finding's first alert and its later notices. */
const pairs = (bodies: Body[]) =>
  bodies
    .flatMap((body) => body.data.items.map((item) => `${item.sender}|${body.data.period.start.slice(0, 10)}`))
    .sort();

/**
 * One finding per rule, domain and report day: its first alert is keyed by the day, each later
 * one revises it and lists only senders not listed before.
 */
function expectOneFindingPerDay(bodies: Body[]): void {
  const byFinding = new Map<string, Body[]>();
  for (const body of bodies) {
    const finding = `${body.data.rule}|${body.data.domain}|${body.data.period.start.slice(0, 10)}`;
    byFinding.set(finding, [...(byFinding.get(finding) ?? []), body]);
  }
  for (const [finding, notices] of byFinding) {
    const day = finding.split("|")[2];
    const first = notices.filter((body) => body.data.period.key === `day:${day}`);
    expect(first, finding).toHaveLength(1);
    for (const later of notices.filter((body) => body !== first[0]))
      expect(later.data.revises, finding).toBe(first[0]!.data.alertId);
  }
}

describe("unapproved senders failing DMARC", () => {
  let backend: Backend;
  let runtime: Runtime;
  let projector: RunningProjector;
  let alerts: RunningAlerts;
  let settings: AlertsSettings;
  let tenantA: string;
  let tenantB: string;
  let tenantC: string;
  let receiverC: WebhookReceiver;
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
    settings = parseSettings(alertsSettings, { WEBHOOK_ALLOW_PRIVATE_ADDRESSES: "yes", ALERT_SETTLE: "0s" });
    const meta = { causedBy: "test" };
    tenantA = (await createTenant(runtime.store, { name: "A", region: "global" }, meta)).tenantId;
    tenantB = (await createTenant(runtime.store, { name: "B", region: "global" }, meta)).tenantId;
    await addDomain(runtime.store, { tenantId: tenantA, domain: "gamma-example.com" }, meta);
    await addDomain(runtime.store, { tenantId: tenantB, domain: "delta-example.com" }, meta);
    tenantC = (await createTenant(runtime.store, { name: "C", region: "global" }, meta)).tenantId;
    await addDomain(runtime.store, { tenantId: tenantC, domain: "epsilon-example.com" }, meta);
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
    receiverC = await startWebhookReceiver();
    for (const [tenantId, receiver, rule] of [
      [tenantA, receiverA, "unapproved_sender"],
      [tenantB, receiverB, "unapproved_sender"],
      [tenantC, receiverC, "new_sender"],
    ] as const) {
      receiver.secret = (
        await addEndpoint(
          runtime.store,
          runtime.db,
          { tenantId, url: receiver.url, alertTypes: [rule] },
          meta,
          { allowPrivate: true, keys: await runtimeDataKeys(runtime, backend.env) },
        )
      ).secret;
    }
    projector = startProjector({ store: runtime.store, db: runtime.db, projections: allProjections });
    alerts = startAlerts({
      store: runtime.store,
      db: runtime.db,
      settings,
      publishPollMs: 20,
      dataKeys: await runtimeDataKeys(runtime, backend.env),
    });
  });

  afterAll(async () => {
    await alerts?.stop();
    await projector?.stop();
    await receiverA?.close();
    await receiverB?.close();
    await receiverC?.close();
    await runtime?.close();
    await backend?.cleanup();
  });

  it("lists each unapproved sender once per (domain, day), for addresses named before or after their report", async () => {
    // Every address but 203.0.113.5 is named before the reports; that one after.
    for (const ip of [
      "192.0.2.10",
      "192.0.2.20",
      "192.0.2.21",
      "198.51.100.9",
      "198.51.100.70",
      "203.0.113.6",
    ]) {
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
    await eventually(
      () => pairs(unapproved(receiverA)).length >= beforeNaming.length,
      "the named senders' alerts",
    );
    await runtime.store.append(streams.sourceIp("203.0.113.5"), [namingEvent("203.0.113.5")], "no_stream");

    const wantA = expectedAlerts(reportsA, decisions, 1);
    const wantB = expectedAlerts(reportsB, { services: {}, ranges: [] }, 5);
    expect(wantA).toContain(
      `${organizationOf(64500)}|${new Date((today - day) * 1000).toISOString().slice(0, 10)}`,
    );
    expect(wantB).toHaveLength(1);
    await eventually(
      () =>
        pairs(unapproved(receiverA)).length >= wantA.length &&
        pairs(unapproved(receiverB)).length >= wantB.length,
      "every unapproved sender's alert",
    );
    await new Promise((resolve) => setTimeout(resolve, 500));

    const gotA = unapproved(receiverA);
    expect(pairs(gotA)).toEqual(wantA);
    expectOneFindingPerDay(gotA);
    expect(
      gotA.every((body) => body.data.tenantId === tenantA && body.data.domain === "gamma-example.com"),
    ).toBe(true);
    const gotB = unapproved(receiverB);
    expect(pairs(gotB)).toEqual(wantB);
    expectOneFindingPerDay(gotB);
    expect(gotB.every((body) => body.data.tenantId === tenantB)).toBe(true);
    expect(receiverA.attempts.every((attempt) => attempt.verified === true)).toBe(true);
    // The refused range's sender says so.
    const refused = gotA.flatMap((body) => body.data.items).find((item) => item.sender === "rangey.example");
    expect(refused?.approved).toBe(false);
  });

  it("lists new_sender once per new service or base name, a new address of a known one raising nothing", async () => {
    // Named before its report: a new address of Good Mail, which the baseline has.
    await runtime.store.append(streams.sourceIp("192.0.2.11"), [namingEvent("192.0.2.11")], "no_stream");
    const reports = [
      aggregateReport({
        identity: "e-1",
        domain: "epsilon-example.com",
        organization: "google.com",
        begin: today - 2 * day,
        end: today - day - 1,
        rows: rows([["192.0.2.10", 20, true]]),
      }),
      yesterday("e-2", "epsilon-example.com", [
        ["192.0.2.10", 5, true], // known address
        ["192.0.2.11", 5, true], // new address of a known service
        ["192.0.2.20", 3, true], // Bad Mail: a new service
        ["192.0.2.21", 3, true], // Bad Mail again
        ["198.51.100.9", 2, true], // a new base domain
        ["203.0.113.6", 2, true], // named by its AS only: by its address
        ["192.0.2.22", 1, true], // named later: Bad Mail, known by then
        ["198.51.100.71", 1, true], // named later: rangey.example, known by then
        ["192.0.2.30", 1, true], // named later: Fresh Mail, new
        ["203.0.113.7", 1, true], // named later, by its AS only
        ["203.0.113.8", 1, true], // never named
      ]),
    ];
    await appendAggregateReports(runtime.store, reports);
    const bodies = () =>
      receiverC.attempts
        .filter((attempt) => attempt.accepted)
        .map((attempt) => JSON.parse(attempt.body) as Body);
    // The members the alerts list, by name (sender:) or, with none, by address (ip:).
    const keys = () =>
      bodies()
        .flatMap((body) => body.data.items)
        .map((item) => (item.senderKind === "ip" ? `ip:${item.sender}` : `sender:${item.sender}`))
        .sort();
    const namedAtOnce = ["sender:Bad Mail", "sender:rangey.example", "ip:203.0.113.6"].sort();
    await eventually(() => keys().length >= namedAtOnce.length, "the alerts of the addresses named already");
    // The addresses not named yet wait for their names (ALERT_NAME_WAIT, an hour by default).
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(keys()).toEqual(namedAtOnce);

    for (const ip of ["192.0.2.22", "198.51.100.71", "192.0.2.30", "203.0.113.7"]) {
      await runtime.store.append(streams.sourceIp(ip), [namingEvent(ip)], "no_stream");
    }
    await eventually(
      () => keys().length >= namedAtOnce.length + 2,
      "the alerts of the addresses named later",
    );
    // 203.0.113.8 has waited long enough two hours from now: decided by its address, once.
    const later = new Date(Date.now() + 2 * 3_600_000);
    const decide = () =>
      decideUnnamedSenders(runtime.db, { nameWaitMs: 3_600_000, maxEventAgeMs: 3 * 86_400_000, now: later });
    expect(await decide()).toBe(1);
    expect(await decide()).toBe(0);

    const want = expectedNewSenders(reports);
    expect(want).toContain("ip:203.0.113.8");
    await eventually(() => keys().length >= want.length, "every new sender's alert");
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(keys()).toEqual(want);
    expectOneFindingPerDay(bodies());
    expect(receiverC.attempts.every((attempt) => attempt.verified === true)).toBe(true);
    // A sender's figures are its day's: every address of it that sent for the domain that day.
    const fresh = bodies()
      .flatMap((body) => body.data.items)
      .find((item) => item.sender === "Fresh Mail");
    expect(fresh).toMatchObject({ sender: "Fresh Mail", senderKind: "service", addresses: 1, messages: 1 });
    const badMail = bodies()
      .flatMap((body) => body.data.items)
      .find((item) => item.sender === "Bad Mail");
    // 192.0.2.20 and .21 were its addresses when the alert went; .22 was named later.
    expect(badMail?.messages).toBeGreaterThanOrEqual(6);
  });
});
