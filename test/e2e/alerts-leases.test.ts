import {
  type AlertsJob,
  type AlertsSettings,
  addEndpoint,
  alertsSettings,
  type RunningAlerts,
  startAlerts,
} from "@dmarc-ledger/alerts";
import { parseSettings } from "@dmarc-ledger/config";
import { checkDomainStatus } from "@dmarc-ledger/onboarding";
import { type RunningProjector, startProjector } from "@dmarc-ledger/projection-engine";
import { openRuntime, type Runtime, runtimeDataKeys } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { createResolver } from "@dmarc-ledger/safe-spf";
import { type FixtureDnsServer, startFixtureDnsServer } from "@dmarc-ledger/safe-spf/testing";
import { addDomain, createTenant } from "@dmarc-ledger/tenancy";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateReport, appendAggregateReports } from "../support/aggregate-report.js";
import { type Backend, postgresBackend } from "../support/service-harness.js";
import { eventually, startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";

const day = 86_400;
const today = Math.floor(Date.now() / 1000 / day) * day;
const jobs: AlertsJob[] = ["alert_evaluator", "alert_schedule"];

/**
 * Two alerts instances over one database, as two projector processes run them: the evaluator and
 * the periodic checks run in one of them at a time, and move to the other when it stops.
 */
describe("the alerts' jobs run once per deployment", () => {
  let backend: Backend;
  let runtime: Runtime;
  let projector: RunningProjector;
  let dns: FixtureDnsServer;
  let receiver: WebhookReceiver;
  let settings: AlertsSettings;
  let tenantId: string;
  const instances: { name: string; alerts: RunningAlerts; dnsChecks: number; stopped: boolean }[] = [];

  const report = (identity: string, begin: number, ips: string[]) =>
    aggregateReport({
      identity,
      domain: "lease-example.com",
      organization: "google.com",
      begin,
      end: begin + day - 1,
      rows: ips.map((sourceIp) => ({
        sourceIp,
        count: 5,
        disposition: "none",
        policyDkim: "pass",
        policySpf: "pass",
      })),
    });
  const newSenderIds = () =>
    receiver.attempts
      .filter((attempt) => attempt.accepted)
      .map(
        (attempt) =>
          JSON.parse(attempt.body) as {
            data: { rule: string; period: { key: string }; items: { sender: string }[] };
          },
      )
      .filter((body) => body.data.rule === "new_sender")
      .map((body) => `${body.data.period.key} ${body.data.items.map((item) => item.sender).join(",")}`)
      .sort();
  const holders = (job: AlertsJob) =>
    instances.filter((instance) => !instance.stopped && instance.alerts.jobs().includes(job));

  beforeAll(async () => {
    backend = await postgresBackend();
    runtime = await openRuntime(backend.env);
    settings = parseSettings(alertsSettings, {
      WEBHOOK_ALLOW_PRIVATE_ADDRESSES: "yes",
      ALERT_NAME_WAIT: "0s",
      ALERT_SETTLE: "0s",
      ALERT_CHECK_INTERVAL: "100ms",
      ALERT_DNS_CHECK_INTERVAL: "100ms",
    });
    dns = await startFixtureDnsServer({
      "lease-example.com": [{ TXT: "v=spf1 ip4:192.0.2.0/24 -all" }],
      "_dmarc.lease-example.com": [{ TXT: "v=DMARC1; p=reject" }],
    });
    const meta = { causedBy: "test" };
    tenantId = (await createTenant(runtime.store, { name: "L", region: "global" }, meta)).tenantId;
    await addDomain(runtime.store, { tenantId, domain: "lease-example.com" }, meta);
    receiver = await startWebhookReceiver();
    receiver.secret = (
      await addEndpoint(runtime.store, runtime.db, { tenantId, url: receiver.url }, meta, {
        allowPrivate: true,
        keys: await runtimeDataKeys(runtime, backend.env),
      })
    ).secret;
    projector = startProjector({ store: runtime.store, db: runtime.db, projections: allProjections });
    for (const name of ["one", "two"]) {
      const instance = { name, alerts: undefined as unknown as RunningAlerts, dnsChecks: 0, stopped: false };
      instance.alerts = startAlerts({
        store: runtime.store,
        db: runtime.db,
        settings,
        dataKeys: await runtimeDataKeys(runtime, backend.env),
        publishPollMs: 20,
        leaseTtlMs: 500,
        owner: `test:${name}`,
        checkDomainStatus: (domain) => {
          instance.dnsChecks += 1;
          return checkDomainStatus(domain, {
            resolver: createResolver({ nameservers: [dns.address], timeoutMs: 1000 }),
            reportsDomain: null,
            safeSpfZone: null,
          });
        },
        onError: (error, what) => console.error(what, error),
      });
      instances.push(instance);
    }
  });

  afterAll(async () => {
    for (const instance of instances) if (!instance.stopped) await instance.alerts.stop();
    await projector?.stop();
    await receiver?.close();
    await dns?.close();
    await runtime?.close();
    await backend?.cleanup();
  });

  it("runs each job in one instance, and hands it to the other when that one stops", async () => {
    await eventually(() => jobs.every((job) => holders(job).length === 1), "each job held");
    for (const job of jobs) expect(holders(job)).toHaveLength(1);

    // The DNS watch runs in the schedule's holder only.
    await eventually(() => instances.some((instance) => instance.dnsChecks >= 3), "a few DNS rounds");
    const [scheduler] = holders("alert_schedule");
    const idle = instances.find((instance) => instance !== scheduler)!;
    expect(idle.dnsChecks).toBe(0);

    // The evaluator runs once: each new sender is raised, and delivered, once.
    const first = [
      report("l-1", today - 2 * day, ["192.0.2.1"]),
      report("l-2", today - day, ["192.0.2.1", "192.0.2.2"]),
    ];
    await appendAggregateReports(runtime.store, first);
    await eventually(() => newSenderIds().length >= 1, "the first new_sender alert");

    // The schedule's holder stops; the other runs both jobs within a lease's time.
    await scheduler!.alerts.stop();
    scheduler!.stopped = true;
    await eventually(() => jobs.every((job) => holders(job)[0] === idle), "the jobs taken over");
    await eventually(() => idle.dnsChecks >= 3, "the DNS watch in the other instance");
    await appendAggregateReports(runtime.store, [report("l-3", today, ["192.0.2.3"])]);
    await eventually(() => newSenderIds().length >= 2, "the second new_sender alert");
    await new Promise((resolve) => setTimeout(resolve, 500));
    // One alert per report day, each listing that day's new sender.
    const dayOf = (at: number) => new Date(at * 1000).toISOString().slice(0, 10);
    expect(newSenderIds()).toEqual([`day:${dayOf(today - day)} 192.0.2.2`, `day:${dayOf(today)} 192.0.2.3`]);
    // Each delivered once by id.
    expect(receiver.attempts.filter((attempt) => attempt.accepted).length).toBe(receiver.acceptedIds().size);
  });
});
