import {
  type AlertsSettings,
  addEndpoint,
  alertsSettings,
  checkDomainsDns,
  checkSilentDomains,
  type RunningAlerts,
  startAlerts,
} from "@dmarc-ledger/alerts";
import { parseSettings } from "@dmarc-ledger/config";
import { type AggregateReportReceived, newEvent, streams } from "@dmarc-ledger/events";
import { checkDomainStatus } from "@dmarc-ledger/onboarding";
import {
  catchUp,
  type RunningProjector,
  resetProjections,
  startProjector,
} from "@dmarc-ledger/projection-engine";
import { openRuntime, type Runtime, runtimeDataKeys } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { createResolver } from "@dmarc-ledger/safe-spf";
import { startFixtureDnsServer } from "@dmarc-ledger/safe-spf/testing";
import { addDomain, createTenant } from "@dmarc-ledger/tenancy";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateReport, appendAggregateReports, type TestRow } from "../support/aggregate-report.js";
import { type Backend, postgresBackend } from "../support/service-harness.js";
import { eventually, startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";

const day = 86_400;
// Reports of recent days: older events build the evaluator's state but raise nothing.
const today = Math.floor(Date.now() / 1000 / day) * day;

function rows(spec: [ip: string, count: number, passes: boolean][]): TestRow[] {
  return spec.map(([sourceIp, count, passes]) => ({
    sourceIp,
    count,
    disposition: "none",
    policyDkim: passes ? "pass" : "fail",
    policySpf: passes ? "pass" : "fail",
  }));
}

/** The senders of `later` that none of `earlier` had: what new_sender must name, computed apart. */
function newSenders(earlier: AggregateReportReceived[], later: AggregateReportReceived): string[] {
  const seen = new Set(earlier.flatMap((report) => report.rows.map((row) => row.sourceIp)));
  return [...new Set(later.rows.map((row) => row.sourceIp))].filter((ip) => !seen.has(ip)).sort();
}

interface Body {
  type: string;
  timestamp: string;
  data: {
    alertId: string;
    tenantId: string;
    rule: string;
    domain: string | null;
    figures: Record<string, unknown>;
    items: Record<string, unknown>[];
  };
}
const parsed = (receiver: WebhookReceiver) =>
  receiver.attempts.map((attempt) => JSON.parse(attempt.body) as Body);

describe("alerts delivered by signed webhooks", () => {
  let backend: Backend;
  let runtime: Runtime;
  let projector: RunningProjector;
  let alerts: RunningAlerts;
  let settings: AlertsSettings;
  let tenantA: string;
  let tenantB: string;
  let receiverA: WebhookReceiver;
  let receiverB: WebhookReceiver;
  const baselineA = aggregateReport({
    identity: "a-1",
    domain: "alpha-example.com",
    organization: "google.com",
    begin: today - 2 * day,
    end: today - day - 1,
    rows: rows([
      ["192.0.2.1", 40, true],
      ["192.0.2.2", 10, true],
    ]),
  });
  const secondA = aggregateReport({
    identity: "a-2",
    domain: "mail.alpha-example.com",
    organization: "yahoo.com",
    begin: today - day,
    end: today - 1,
    rows: rows([
      ["192.0.2.1", 30, true],
      ["198.51.100.7", 8, false],
      ["198.51.100.8", 2, false],
    ]),
  });

  beforeAll(async () => {
    backend = await postgresBackend();
    runtime = await openRuntime(backend.env);
    settings = parseSettings(alertsSettings, {
      WEBHOOK_RETRY_BASE: "50ms",
      WEBHOOK_RETRY_MAX: "200ms",
      WEBHOOK_RETRY_FOR: "1h",
      WEBHOOK_TIMEOUT: "2s",
      WEBHOOK_ALLOW_PRIVATE_ADDRESSES: "yes",
      // Not waiting for the resolver to name a new sender: new_sender by its address at once.
      ALERT_NAME_WAIT: "0s",
      ALERT_SETTLE: "0s",
    });
    tenantA = (await createTenant(runtime.store, { name: "A", region: "global" }, { causedBy: "test" }))
      .tenantId;
    tenantB = (await createTenant(runtime.store, { name: "B", region: "global" }, { causedBy: "test" }))
      .tenantId;
    await addDomain(runtime.store, { tenantId: tenantA, domain: "alpha-example.com" }, { causedBy: "test" });
    await addDomain(runtime.store, { tenantId: tenantB, domain: "beta-example.com" }, { causedBy: "test" });
    receiverA = await startWebhookReceiver();
    receiverB = await startWebhookReceiver();
    const allow = { allowPrivate: true, keys: await runtimeDataKeys(runtime, backend.env) };
    receiverA.secret = (
      await addEndpoint(
        runtime.store,
        runtime.db,
        { tenantId: tenantA, url: receiverA.url },
        { causedBy: "test" },
        allow,
      )
    ).secret;
    receiverB.secret = (
      await addEndpoint(
        runtime.store,
        runtime.db,
        { tenantId: tenantB, url: receiverB.url },
        { causedBy: "test" },
        allow,
      )
    ).secret;
    projector = startProjector({ store: runtime.store, db: runtime.db, projections: allProjections });
    alerts = startAlerts({
      store: runtime.store,
      db: runtime.db,
      settings,
      dataKeys: await runtimeDataKeys(runtime, backend.env),
      publishPollMs: 20,
      onError: (error, what) => console.error(what, error),
    });
  });

  afterAll(async () => {
    await alerts?.stop();
    await projector?.stop();
    await receiverA?.close();
    await receiverB?.close();
    await runtime?.close();
    await backend?.cleanup();
  });

  it("raises one alert per rule and period, each delivered signed, the same id on every retry", async () => {
    // The receiver is down (503) for its first three attempts: the retries carry the same id and body.
    let refusals = 3;
    receiverA.answer = () => (refusals-- > 0 ? 503 : 204);

    await appendAggregateReports(runtime.store, [baselineA, secondA]);
    await runtime.store.append(
      streams.failureReport("f-1"),
      [
        newEvent(
          "ForensicReportReceived",
          {
            identity: "f-1",
            feedbackType: "auth-failure",
            reportedDomain: "alpha-example.com",
            arrivalDate: new Date().toUTCString(),
            authFailure: "dmarc",
            deliveryResult: "reject",
            incidents: 1,
            personal: {
              clear: {
                subject: "hello",
                sourceIp: "203.0.113.9",
                headers: "",
                originalMailFrom: "someone@elsewhere.example",
                originalRcptTo: null,
              },
            },
            source: "test",
            warnings: [],
          },
          { causedBy: "test" },
        ),
      ],
      "no_stream",
    );
    const computed = (records: string, lookupsBefore: number) =>
      newEvent(
        "SafeSpfRecordComputed",
        {
          domain: "alpha-example.com",
          tenantId: tenantA,
          original: "v=spf1 include:a include:b -all",
          records: [{ name: "alpha-example.com", value: records }],
          lookupsBefore,
          lookupsAfter: 1,
          networks: [],
          added: [],
          removed: [],
          warnings: [],
          minTtl: 300,
        },
        { causedBy: "test" },
      );
    await runtime.store.append(
      streams.domain("alpha-example.com"),
      [computed("v=spf1 ip4:192.0.2.0/24 -all", 12)],
      "any",
    );
    await runtime.store.append(
      streams.domain("alpha-example.com"),
      [computed("v=spf1 ip4:192.0.2.0/25 -all", 12)],
      "any",
    );
    await runtime.store.append(
      streams.domain("alpha-example.com"),
      [
        newEvent(
          "SafeSpfComputationFailed",
          {
            domain: "alpha-example.com",
            tenantId: tenantA,
            original: "v=spf1 include:a include:b -all",
            code: "timeout",
            message: "no answer",
            retrying: true,
          },
          { causedBy: "test" },
        ),
      ],
      "any",
    );

    const expected = new Map<string, number>([
      // One finding for the domain's report day, listing every new sender.
      ["new_sender", 1],
      ["dmarc_failure_share", 1],
      ["failure_report", 1],
      ["spf_lookup_limit", 1],
      ["safe_spf_changed", 1],
      ["safe_spf_failed", 1],
    ]);
    const total = [...expected.values()].reduce((sum, n) => sum + n, 0);
    await eventually(() => receiverA.acceptedIds().size >= total, `${total} alerts at A`);
    // A moment more, in case a second alert of some rule were on its way.
    await new Promise((resolve) => setTimeout(resolve, 500));

    const accepted = receiverA.attempts.filter((attempt) => attempt.accepted);
    expect(accepted).toHaveLength(total);
    const byRule = new Map<string, number>();
    for (const body of accepted.map((attempt) => JSON.parse(attempt.body) as Body)) {
      byRule.set(body.data.rule, (byRule.get(body.data.rule) ?? 0) + 1);
      expect(body.data.tenantId).toBe(tenantA);
      expect(body.type).toBe(`alert.${body.data.rule}`);
    }
    expect(Object.fromEntries(byRule)).toEqual(Object.fromEntries(expected));

    // new_sender lists exactly the senders the baseline did not have (by address: none is named).
    const named = parsed(receiverA)
      .filter((body) => body.data.rule === "new_sender")
      .flatMap((body) => body.data.items.map((item) => item.sender as string));
    expect(named.sort()).toEqual(newSenders([baselineA], secondA));
    // The failure share, computed from the rows of the window's one day.
    const share = parsed(receiverA).find((body) => body.data.rule === "dmarc_failure_share")!;
    const failed = secondA.rows.filter((row) => row.policyDkim !== "pass" && row.policySpf !== "pass");
    expect(share.data.figures.failed).toBe(failed.reduce((sum, row) => sum + row.count, 0));
    expect(share.data.figures.messages).toBe(secondA.rows.reduce((sum, row) => sum + row.count, 0));

    // Every attempt verifies with the library's verifier; retries repeat the id and the body.
    expect(receiverA.attempts.every((attempt) => attempt.verified === true)).toBe(true);
    const retried = receiverA.attempts.filter((attempt) => !attempt.accepted);
    expect(retried).toHaveLength(3);
    for (const refused of retried) {
      const later = receiverA.attempts.filter((attempt) => attempt.id === refused.id && attempt.accepted);
      expect(later).toHaveLength(1);
      expect(later[0]!.body).toBe(refused.body);
    }
    // Ids are the alerts' own: one per accepted attempt.
    expect(new Set(accepted.map((attempt) => attempt.id)).size).toBe(total);
    expect(accepted.every((attempt) => attempt.id === (JSON.parse(attempt.body) as Body).data.alertId)).toBe(
      true,
    );

    // A failure report's personal fields stay out of its alert.
    const failure = accepted.find((attempt) => attempt.body.includes('"failure_report"'))!;
    expect(failure.body).not.toMatch(/203\.0\.113\.9|someone@elsewhere|hello/);

    // Tenant B's endpoint received nothing of A's.
    expect(receiverB.attempts).toHaveLength(0);
  });

  it("no_reports is raised once per silence, however often the check runs", async () => {
    const before = receiverA.acceptedIds().size;
    const later = new Date(Date.now() + 4 * day * 1000);
    expect(await checkSilentDomains(runtime.db, later)).toBe(1);
    expect(await checkSilentDomains(runtime.db, new Date(later.getTime() + 60_000))).toBe(0);
    await eventually(() => receiverA.acceptedIds().size === before + 1, "the no_reports alert");
    const last = parsed(receiverA).at(-1)!;
    expect(last.data.rule).toBe("no_reports");
    expect(last.data.domain).toBe("alpha-example.com");
  });

  it("the periodic check of live DNS raises a changed record and a check turned bad, once each", async () => {
    const zones = (spf: string, dmarc: boolean) => ({
      "alpha-example.com": [{ TXT: spf }],
      ...(dmarc
        ? { "_dmarc.alpha-example.com": [{ TXT: "v=DMARC1; p=reject; rua=mailto:d@alpha-example.com" }] }
        : {}),
    });
    const dns = await startFixtureDnsServer(zones("v=spf1 ip4:192.0.2.0/24 -all", true));
    try {
      const check = (domain: string) =>
        checkDomainStatus(domain, {
          resolver: createResolver({ nameservers: [dns.address], timeoutMs: 1000 }),
          reportsDomain: null,
          safeSpfZone: null,
        });
      const before = receiverA.acceptedIds().size;
      // The first check is the baseline; an unchanged one raises nothing.
      expect(await checkDomainsDns(runtime.db, check)).toBe(0);
      expect(await checkDomainsDns(runtime.db, check)).toBe(0);
      dns.setZones(zones("v=spf1 ip4:192.0.2.0/24 ip4:198.51.100.0/24 -all", true));
      expect(await checkDomainsDns(runtime.db, check)).toBe(1);
      expect(await checkDomainsDns(runtime.db, check)).toBe(0);
      // The DMARC record gone: a changed record, and the check has a problem it did not have.
      dns.setZones(zones("v=spf1 ip4:192.0.2.0/24 ip4:198.51.100.0/24 -all", false));
      expect(await checkDomainsDns(runtime.db, check)).toBe(2);
      await eventually(() => receiverA.acceptedIds().size === before + 3, "the DNS alerts");
      const rules = parsed(receiverA)
        .slice(-3)
        .map((body) => body.data.rule)
        .sort();
      expect(rules).toEqual(["dns_record_changed", "dns_record_changed", "onboarding_bad"]);
      // Deliveries are concurrent, so the two changes may arrive in either order: each is found
      // by what it says changed, not by its place.
      const changes = parsed(receiverA)
        .slice(-3)
        .filter((body) => body.data.rule === "dns_record_changed")
        .map((body) => body.data.figures);
      const dmarc = "v=DMARC1; p=reject; rua=mailto:d@alpha-example.com";
      const wider = "v=spf1 ip4:192.0.2.0/24 ip4:198.51.100.0/24 -all";
      expect(changes).toEqual(
        expect.arrayContaining([
          { dmarcBefore: dmarc, dmarcNow: dmarc, spfBefore: "v=spf1 ip4:192.0.2.0/24 -all", spfNow: wider },
          { dmarcBefore: dmarc, dmarcNow: null, spfBefore: wider, spfNow: wider },
        ]),
      );
      expect(receiverB.attempts).toHaveLength(0);
    } finally {
      await dns.close();
    }
  });

  it("B's alerts reach B's endpoint only", async () => {
    const beforeA = receiverA.attempts.length;
    await appendAggregateReports(runtime.store, [
      aggregateReport({
        identity: "b-1",
        domain: "beta-example.com",
        organization: "google.com",
        begin: today - day,
        end: today - 1,
        rows: rows([["192.0.2.50", 100, true]]),
      }),
      aggregateReport({
        identity: "b-2",
        domain: "beta-example.com",
        organization: "google.com",
        begin: today - day,
        end: today - 1,
        rows: rows([["192.0.2.51", 100, true]]),
      }),
    ]);
    await eventually(() => receiverB.acceptedIds().size === 1, "B's new_sender alert");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(
      parsed(receiverB).map((body) => [
        body.data.tenantId,
        body.data.rule,
        body.data.items.map((item) => item.sender),
      ]),
    ).toEqual([[tenantB, "new_sender", ["192.0.2.51"]]]);
    expect(receiverB.attempts.every((attempt) => attempt.verified === true)).toBe(true);
    expect(receiverA.attempts.length).toBe(beforeA);
  });

  it("dmarc_failure_share also raises a share under the threshold but far above the domain's baseline", async () => {
    await addDomain(runtime.store, { tenantId: tenantA, domain: "gamma-example.com" }, { causedBy: "test" });
    const reportOf = (identity: string, begin: number, passing: number, failing: number) =>
      aggregateReport({
        identity,
        domain: "gamma-example.com",
        organization: "google.com",
        begin,
        end: begin + day - 1,
        rows: rows([
          ["192.0.2.9", passing, true],
          ["192.0.2.10", failing, false],
        ]),
      });
    // 1% failing ten days ago (the baseline), then 2% and 8% on the next reports' days: both
    // under the 10% threshold; 2% is not 3 times 1%, 8% is 3 times (and 2 points over) 1.5%.
    const before = receiverA.acceptedIds().size;
    const reports = [
      reportOf("g-1", today - 10 * day, 99, 1),
      reportOf("g-2", today - 2 * day, 98, 2),
      reportOf("g-3", today - day, 92, 8),
    ];
    await appendAggregateReports(runtime.store, reports);
    await eventually(() => receiverA.acceptedIds().size === before + 1, "the baseline alert");
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiverA.acceptedIds().size).toBe(before + 1);
    const alert = parsed(receiverA).at(-1)!;
    const failedOf = (report: AggregateReportReceived) =>
      report.rows
        .filter((row) => row.policyDkim !== "pass" && row.policySpf !== "pass")
        .reduce((n, row) => n + row.count, 0);
    const totalOf = (report: AggregateReportReceived) => report.rows.reduce((n, row) => n + row.count, 0);
    expect(alert.data).toMatchObject({ rule: "dmarc_failure_share", domain: "gamma-example.com" });
    expect(alert.data.figures).toMatchObject({
      failed: failedOf(reports[2]!),
      messages: totalOf(reports[2]!),
      aboveBaseline: true,
      // The 28 days before the window: g-1 and g-2 together.
      baselinePercent:
        Math.round(
          ((failedOf(reports[0]!) + failedOf(reports[1]!)) * 10_000) /
            (totalOf(reports[0]!) + totalOf(reports[1]!)),
        ) / 100,
    });
  });

  it("replaying the read models raises nothing again", async () => {
    const outbox = await runtime.db.selectFrom("alert_outbox").select("alert_id").execute();
    const attempts = receiverA.attempts.length + receiverB.attempts.length;
    await projector.stop();
    await resetProjections(runtime.db, allProjections);
    await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
    projector = startProjector({ store: runtime.store, db: runtime.db, projections: allProjections });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await runtime.db.selectFrom("alert_outbox").select("alert_id").execute()).toHaveLength(
      outbox.length,
    );
    expect(receiverA.attempts.length + receiverB.attempts.length).toBe(attempts);
    // The alerts' read model is rebuilt whole from the AlertRaised events.
    expect(await runtime.db.selectFrom("alert").select("alert_id").execute()).toHaveLength(outbox.length);
  });
});
