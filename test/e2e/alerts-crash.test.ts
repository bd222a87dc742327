import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { addEndpoint } from "@dmarc-ledger/alerts";
import { streams } from "@dmarc-ledger/events";
import { openRuntime, type Runtime, runtimeDataKeys } from "@dmarc-ledger/runtime";
import { addDomain, createTenant } from "@dmarc-ledger/tenancy";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateReport, appendAggregateReports } from "../support/aggregate-report.js";
import { builtEntry } from "../support/built-processes.js";
import { type Backend, postgresBackend } from "../support/service-harness.js";
import { eventually, startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const day = 86_400;
const today = Math.floor(Date.now() / 1000 / day) * day;

describe("the alerts of a projector killed with SIGKILL between alert and delivery", () => {
  let backend: Backend;
  let runtime: Runtime;
  let receiver: WebhookReceiver;
  let projectorMain: string[];
  let tenantId: string;
  const running = new Set<ChildProcess>();

  const startProjector = (): ChildProcess => {
    const child = spawn(process.execPath, projectorMain, {
      cwd: repoRoot,
      env: {
        ...process.env,
        ...backend.env,
        LOG_LEVEL: "silent",
        DNS_NAMESERVERS: "127.0.0.1:9",
        WEBHOOK_ALLOW_PRIVATE_ADDRESSES: "yes",
        // Not waiting for the resolver to name a new sender: new_sender by its address at once.
        ALERT_NAME_WAIT: "0s",
        ALERT_SETTLE: "0s",
        WEBHOOK_RETRY_BASE: "50ms",
        WEBHOOK_RETRY_MAX: "200ms",
        WEBHOOK_TIMEOUT: "1s",
        WEBHOOK_CONCURRENCY: "4",
      },
      stdio: "ignore",
    });
    running.add(child);
    child.once("exit", () => running.delete(child));
    return child;
  };
  const killed = (child: ChildProcess) =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once("exit", () => resolve());
      child.kill("SIGKILL");
    });

  beforeAll(async () => {
    projectorMain = await builtEntry("apps/projector/dist/main.js");
    backend = await postgresBackend();
    runtime = await openRuntime(backend.env);
    tenantId = (await createTenant(runtime.store, { name: "crash", region: "global" }, { causedBy: "test" }))
      .tenantId;
    await addDomain(runtime.store, { tenantId, domain: "crash-alerts.com" }, { causedBy: "test" });
    receiver = await startWebhookReceiver();
    // Slow answers: a kill often lands while attempts are in flight.
    receiver.answer = () => 200;
    receiver.delayMs = 150;
    receiver.secret = (
      await addEndpoint(
        runtime.store,
        runtime.db,
        { tenantId, url: receiver.url },
        { causedBy: "test" },
        { allowPrivate: true, keys: await runtimeDataKeys(runtime, backend.env) },
      )
    ).secret;
  });

  afterAll(async () => {
    for (const child of running) await killed(child);
    await receiver?.close();
    await runtime?.close();
    await backend?.cleanup();
  });

  it("delivers every alert, each id accepted, none raised twice, after the restarts", async () => {
    const baseline = aggregateReport({
      identity: "crash-base",
      domain: "crash-alerts.com",
      organization: "google.com",
      begin: today - day,
      end: today - 1,
      rows: [
        { sourceIp: "192.0.2.1", count: 10, disposition: "none", policyDkim: "pass", policySpf: "pass" },
      ],
    });
    // 12 reports of one day with 5 new senders each: one finding, whose first alert and later
    // notices list the 60 senders, each once.
    const reports = Array.from({ length: 12 }, (_, index) =>
      aggregateReport({
        identity: `crash-${index}`,
        domain: "crash-alerts.com",
        organization: "google.com",
        begin: today - day,
        end: today - 1,
        rows: Array.from({ length: 5 }, (_, row) => ({
          sourceIp: `198.51.${index}.${row + 1}`,
          count: 3,
          disposition: "none",
          policyDkim: "pass",
          policySpf: "pass",
        })),
      }),
    );
    const expectedIps = new Set(reports.flatMap((report) => report.rows.map((row) => row.sourceIp)));

    let projector = startProjector();
    await appendAggregateReports(runtime.store, [baseline]);
    let kills = 0;
    // Alerts decided but not yet delivered at each kill: the kills must land between the two.
    let undeliveredAtKills = 0;
    for (const [index, report] of reports.entries()) {
      await appendAggregateReports(runtime.store, [report]);
      if (index % 3 === 2) {
        // Once some alerts of this round have reached the receiver (others being decided, published
        // or in flight), kill the process and start another.
        const seen = receiver.attempts.length;
        await eventually(() => receiver.attempts.length > seen, "an attempt before the kill", 60_000);
        await killed(projector);
        kills++;
        const unpublished = await runtime.db
          .selectFrom("alert_outbox")
          .select("alert_id")
          .where("published", "=", false)
          .execute();
        const pending = await runtime.db
          .selectFrom("webhook_delivery")
          .select("delivery_id")
          .where("status", "=", "pending")
          .execute();
        undeliveredAtKills += unpublished.length + pending.length;
        projector = startProjector();
      }
    }
    expect(kills).toBe(4);
    expect(undeliveredAtKills).toBeGreaterThan(0);

    const listed = () =>
      new Map(
        receiver.attempts
          .filter((attempt) => attempt.accepted)
          .map((attempt) => [attempt.id, JSON.parse(attempt.body).data.items as { sender: string }[]]),
      );
    await eventually(
      () => [...listed().values()].flat().length >= expectedIps.size,
      "every sender listed after the restarts",
      90_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    await killed(projector);

    const bodies = receiver.attempts
      .filter((attempt) => attempt.accepted)
      .map((attempt) => JSON.parse(attempt.body));
    const deliveredIps = new Set(
      bodies.flatMap((body) => body.data.items.map((item: { sender: string }) => item.sender)),
    );
    expect(deliveredIps).toEqual(expectedIps);
    // Each sender in one alert only: the alerts' lists add up to the senders.
    expect([...listed().values()].flat()).toHaveLength(expectedIps.size);
    const period = new Set(bodies.map((body) => body.data.period.start));
    expect(period.size).toBe(1);
    expect(receiver.attempts.every((attempt) => attempt.verified)).toBe(true);
    // Each alert was raised once: one outbox row, one AlertRaised in its stream.
    const outbox = await runtime.db.selectFrom("alert_outbox").select("alert_id").execute();
    expect(outbox).toHaveLength(receiver.acceptedIds().size);
    for (const { alert_id } of outbox) {
      expect(await runtime.store.readStream(streams.alert(alert_id))).toHaveLength(1);
    }
    // Repeats (an attempt answered but not recorded before a kill) carry the same id and body.
    for (const attempt of receiver.attempts) {
      const first = receiver.attempts.find((other) => other.id === attempt.id)!;
      expect(attempt.body).toBe(first.body);
    }
  });
});
