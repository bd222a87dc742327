import { spawn } from "node:child_process";
import {
  type AlertsSettings,
  addEndpoint,
  alertsSettings,
  changeEndpoint,
  listDeliveries,
  listEndpoints,
  RefusedAddressError,
  type RunningAlerts,
  redeliver,
  scheduleDigests,
  sendWebhook,
  startAlerts,
} from "@dmarc-ledger/alerts";
import { parseSettings } from "@dmarc-ledger/config";
import { newEvent } from "@dmarc-ledger/events";
import type { DataKeys } from "@dmarc-ledger/personal-data";
import { type RunningProjector, startProjector } from "@dmarc-ledger/projection-engine";
import { openRuntime, type Runtime, runtimeDataKeys } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { addDomain, createTenant } from "@dmarc-ledger/tenancy";
import { addUser, findUserId, removeTenantPeople } from "@dmarc-ledger/users";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateReport, appendAggregateReports } from "../support/aggregate-report.js";
import { type Backend, postgresBackend } from "../support/service-harness.js";
import { type SmtpReceiver, startSmtpReceiver } from "../support/smtp-receiver.js";
import { eventually, startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";

const day = 86_400;
const today = Math.floor(Date.now() / 1000 / day) * day;
const message = { id: "msg_test", body: JSON.stringify({ type: "test", data: {} }) };

/** Two reports of a domain, the second with `ips` new senders: that many new_sender alerts. */
/**
 * A domain's baseline report, then one report per new address, each of another report day inside
 * new_sender's window (today and the three days before): one alert per address.
 */
function reportsWithNewSenders(domain: string, tag: string, ips: string[]) {
  const row = (sourceIp: string) => ({
    sourceIp,
    count: 5,
    disposition: "none",
    policyDkim: "pass",
    policySpf: "pass",
  });
  if (ips.length > 4) throw new Error("at most four report days inside the window");
  return [
    aggregateReport({
      identity: `${tag}-base`,
      domain,
      organization: "google.com",
      begin: today - 5 * day,
      end: today - 4 * day - 1,
      rows: [row("192.0.2.1")],
    }),
    ...ips.map((ip, n) =>
      aggregateReport({
        identity: `${tag}-new-${n}`,
        domain,
        organization: "google.com",
        begin: today - n * day,
        end: today - (n - 1) * day - 1,
        rows: [row(ip)],
      }),
    ),
  ];
}

describe("webhook attempts are bounded", () => {
  let hanging: WebhookReceiver;
  let huge: WebhookReceiver;
  beforeAll(async () => {
    hanging = await startWebhookReceiver();
    hanging.answer = () => "hang";
    huge = await startWebhookReceiver();
    huge.answer = () => "huge";
  });
  afterAll(async () => {
    await hanging?.close();
    await huge?.close();
  });
  const limits = { timeoutMs: 300, maxResponseBytes: 1024, allowPrivate: true };

  it("gives up on a receiver that does not answer when its time is up", async () => {
    const started = Date.now();
    const outcome = await sendWebhook(hanging.url, "whsec_dGVzdHRlc3R0ZXN0dGVzdA==", message, limits);
    expect(outcome.ok).toBe(false);
    expect(outcome.error).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("reads no more of an endless answer than its limit", async () => {
    const outcome = await sendWebhook(huge.url, "whsec_dGVzdHRlc3R0ZXN0dGVzdA==", message, limits);
    expect(outcome).toEqual({ ok: true, status: 200, error: null });
  });

  it("refuses loopback, private and link-local addresses unless allowed, after resolving names", async () => {
    const strict = { ...limits, allowPrivate: false };
    const port = new URL(huge.url).port;
    for (const url of [
      `http://127.0.0.1:${port}/`,
      `http://localhost:${port}/`,
      `http://[::1]:${port}/`,
      "http://10.1.2.3/",
      "http://169.254.169.254/latest/meta-data",
      "http://192.168.0.1/",
    ]) {
      const outcome = await sendWebhook(url, "whsec_dGVzdHRlc3R0ZXN0dGVzdA==", message, strict);
      expect(outcome, url).toEqual({ ok: false, status: null, error: "not_public" });
    }
    // localhost reached the receiver only when allowed: none of the refused attempts arrived.
    expect(huge.attempts).toHaveLength(1);
  });

  it("counts an answer that came in time as delivered though the event loop was held past the timeout", async () => {
    // The receiver in a process of its own, answering 200 a moment after the request, while this
    // process's loop is held: what made a delivery arrive twice (its answer lost to its timeout).
    const child = spawn(
      process.execPath,
      [
        "-e",
        `const http = require("node:http");
         const server = http.createServer((req, res) => {
           req.resume();
           req.on("end", () => { process.stdout.write("got\\n"); setTimeout(() => res.end("ok"), 150); });
         });
         server.listen(0, "127.0.0.1", () => process.stdout.write("port " + server.address().port + "\\n"));`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    try {
      const lines: string[] = [];
      child.stdout!.setEncoding("utf8").on("data", (chunk: string) => lines.push(...chunk.split("\n")));
      await eventually(() => lines.some((line) => line.startsWith("port ")), "the receiver listening");
      const port = lines.find((line) => line.startsWith("port "))!.slice(5);
      const sending = sendWebhook(
        `http://127.0.0.1:${port}/hook`,
        "whsec_dGVzdHRlc3R0ZXN0dGVzdA==",
        message,
        {
          ...limits,
          timeoutMs: 400,
        },
      );
      await eventually(() => lines.includes("got"), "the request received");
      // Held well past the timeout, in an I/O or check-phase callback as real work is (the next
      // loop turn then runs the expired timers before the waiting I/O); the answer arrives
      // meanwhile (150 ms after the request).
      await new Promise<void>((resolve) =>
        setImmediate(() => {
          const until = Date.now() + 1500;
          while (Date.now() < until) {}
          resolve();
        }),
      );
      expect(await sending).toEqual({ ok: true, status: 200, error: null });
    } finally {
      child.kill();
    }
  });

  it("reports a failure as its category: no answer's body, no address", async () => {
    const failing = await startWebhookReceiver();
    failing.answer = () => 500;
    const closed = await startWebhookReceiver();
    const closedUrl = closed.url;
    await closed.close();
    try {
      const cases: [string, string][] = [
        [failing.url, "http_status 500"],
        [closedUrl, "refused"],
        // A name that never resolves (RFC 6761).
        ["http://no-such-receiver.invalid/hook", "dns"],
        // TLS spoken to a plain HTTP receiver.
        [failing.url.replace("http:", "https:"), "tls"],
      ];
      for (const [url, category] of cases) {
        const outcome = await sendWebhook(url, "whsec_dGVzdHRlc3R0ZXN0dGVzdA==", message, limits);
        expect(outcome.ok, url).toBe(false);
        expect(outcome.error, url).toBe(category);
      }
    } finally {
      await failing.close();
    }
  });
});

describe("deliveries under failure", () => {
  let backend: Backend;
  let runtime: Runtime;
  let dataKeys: DataKeys;
  let projector: RunningProjector;
  let alerts: RunningAlerts;
  let settings: AlertsSettings;
  let smtp: SmtpReceiver;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    backend = await postgresBackend();
    runtime = await openRuntime(backend.env);
    dataKeys = await runtimeDataKeys(runtime, backend.env);
    smtp = await startSmtpReceiver();
    settings = parseSettings(alertsSettings, {
      WEBHOOK_RETRY_BASE: "50ms",
      WEBHOOK_RETRY_MAX: "100ms",
      WEBHOOK_RETRY_FOR: "4s",
      WEBHOOK_TIMEOUT: "400ms",
      WEBHOOK_CONCURRENCY: "2",
      WEBHOOK_ALLOW_PRIVATE_ADDRESSES: "yes",
      // Not waiting for the resolver to name a new sender: new_sender by its address at once.
      ALERT_NAME_WAIT: "0s",
      ALERT_SETTLE: "0s",
      ALERT_SMTP_URL: smtp.url,
      ALERT_MAIL_FROM: "alerts@dmarc-ledger.test",
    });
    projector = startProjector({ store: runtime.store, db: runtime.db, projections: allProjections });
    alerts = startAlerts({
      store: runtime.store,
      db: runtime.db,
      settings,
      dataKeys,
      publishPollMs: 20,
      onError: (error, what) => console.error(what, error),
    });
  });

  afterAll(async () => {
    await alerts?.stop();
    await projector?.stop();
    for (const receiver of receivers) await receiver.close();
    await smtp?.close();
    await runtime?.close();
    await backend?.cleanup();
  });

  /** A mail row of the person with this address (the rows name people, never addresses). */
  async function mailRowOf(email: string) {
    const userId = await findUserId(runtime.store, runtime.db, dataKeys, email);
    return runtime.db
      .selectFrom("alert_email")
      .select(["tenant_id", "user_id"])
      .where("user_id", "=", userId!)
      .executeTakeFirstOrThrow();
  }

  async function tenantWithEndpoint(name: string, domain: string, answer: WebhookReceiver["answer"]) {
    const tenantId = (await createTenant(runtime.store, { name, region: "global" }, { causedBy: "test" }))
      .tenantId;
    await addDomain(runtime.store, { tenantId, domain }, { causedBy: "test" });
    const receiver = await startWebhookReceiver();
    receivers.push(receiver);
    receiver.answer = answer;
    const endpoint = await addEndpoint(
      runtime.store,
      runtime.db,
      { tenantId, url: receiver.url },
      { causedBy: "test" },
      { allowPrivate: true, keys: dataKeys },
    );
    receiver.secret = endpoint.secret;
    return { tenantId, receiver, endpointId: endpoint.endpointId };
  }

  it("a receiver that hangs holds one attempt at a time, not the worker", async () => {
    const slow = await tenantWithEndpoint("slow", "slow-example.com", () => "hang");
    const quick = await tenantWithEndpoint("quick", "quick-example.com", () => 204);
    const slowIps = ["198.51.100.1", "198.51.100.2", "198.51.100.3", "198.51.100.4"];
    const quickIps = ["198.51.100.11", "198.51.100.12", "198.51.100.13"];
    await appendAggregateReports(runtime.store, reportsWithNewSenders("slow-example.com", "slow", slowIps));
    await eventually(() => slow.receiver.attempts.length >= 2, "the slow receiver's first attempts");
    await appendAggregateReports(
      runtime.store,
      reportsWithNewSenders("quick-example.com", "quick", quickIps),
    );
    // With two attempts in flight at most, the quick receiver still gets every alert while the
    // slow one keeps timing out.
    await eventually(
      () => quick.receiver.acceptedIds().size === quickIps.length,
      "the quick receiver's alerts",
    );
    expect(quick.receiver.attempts.every((attempt) => attempt.verified)).toBe(true);
    expect(slow.receiver.acceptedIds().size).toBe(0);
    // Once it answers again, its alerts arrive too.
    slow.receiver.answer = () => 204;
    await eventually(() => slow.receiver.acceptedIds().size === slowIps.length, "the slow receiver's alerts");
  });

  it("a dead endpoint with 5,000 pending holds no other tenant's delivery: the live one's within 5 s", async () => {
    const dead = await tenantWithEndpoint("dead", "dead-example.com", () => "hang");
    const now = new Date();
    const pending = Array.from({ length: 5000 }, (_, n) => ({
      delivery_id: `alrt_backlog${n}.${dead.endpointId}`,
      alert_id: `alrt_backlog${n}`,
      endpoint_id: dead.endpointId,
      tenant_id: dead.tenantId,
      body: "{}",
      status: "pending",
      attempts: 0,
      next_attempt_at: new Date(now.getTime() - 60_000 + n),
      created_at: now,
    }));
    for (let start = 0; start < pending.length; start += 1000)
      await runtime.db
        .insertInto("webhook_delivery")
        .values(pending.slice(start, start + 1000))
        .execute();
    await eventually(() => dead.receiver.attempts.length >= 1, "the dead endpoint tried");
    const live = await tenantWithEndpoint("live", "live-example.com", () => 204);
    await appendAggregateReports(
      runtime.store,
      reportsWithNewSenders("live-example.com", "live", ["198.51.100.77"]),
    );
    // From the alert's delivery queued to the live receiver, with the dead one's 5,000 due before it.
    await eventually(
      async () =>
        (
          await runtime.db
            .selectFrom("webhook_delivery")
            .select("delivery_id")
            .where("endpoint_id", "=", live.endpointId)
            .execute()
        ).length === 1,
      "the live endpoint's delivery queued",
    );
    await eventually(() => live.receiver.acceptedIds().size === 1, "the live endpoint's alert", 5000);
    // The dead endpoint had one attempt at a time, and waits out a backoff between them; its
    // attempt's timeout may end after the live delivery (under load), so its health is awaited.
    const deadHealth = () =>
      runtime.db
        .selectFrom("webhook_endpoint_health")
        .selectAll()
        .where("endpoint_id", "=", dead.endpointId)
        .executeTakeFirst();
    await eventually(async () => (await deadHealth())?.last_failure === "timeout", "the dead one's timeout");
    const health = (await deadHealth())!;
    expect(health.last_failure).toBe("timeout");
    expect(health.failing_since).not.toBeNull();
    expect(health.last_success_at).toBeNull();
    const stillPending = await runtime.db
      .selectFrom("webhook_delivery")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .where("endpoint_id", "=", dead.endpointId)
      .where("status", "=", "pending")
      .executeTakeFirstOrThrow();
    expect(Number(stillPending.n)).toBeGreaterThan(4900);
    // As the listing shows it: failing, by timeout, thousands waiting.
    const [listed] = await listEndpoints(runtime.db, dead.tenantId);
    expect(listed!.health).toMatchObject({ last_failure: "timeout", last_success_at: null });
    expect(listed!.health.failing_since).not.toBeNull();
    expect(listed!.health.pending).toBe(Number(stillPending.n));
    // Out of the way of the tests after this one.
    await runtime.db.deleteFrom("webhook_delivery").where("endpoint_id", "=", dead.endpointId).execute();
  });

  it("a receiver down for a while gets each alert once by id when it is back", async () => {
    let up = false;
    const flaky = await tenantWithEndpoint("flaky", "flaky-example.com", () => (up ? 200 : 503));
    const ips = ["203.0.113.1", "203.0.113.2", "203.0.113.3"];
    await appendAggregateReports(runtime.store, reportsWithNewSenders("flaky-example.com", "flaky", ips));
    await eventually(() => flaky.receiver.attempts.length >= 6, "attempts while the receiver is down");
    up = true;
    await eventually(
      () => flaky.receiver.acceptedIds().size === ips.length,
      "every alert after it came back",
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const accepted = flaky.receiver.attempts.filter((attempt) => attempt.accepted);
    expect(accepted).toHaveLength(ips.length);
    const log = await listDeliveries(runtime.db, flaky.tenantId, flaky.endpointId, { limit: 10, offset: 0 });
    expect(log!.records.map((record) => record.status)).toEqual(["delivered", "delivered", "delivered"]);
    expect(log!.records.every((record) => record.attempts >= 2)).toBe(true);
    // Another tenant cannot read this endpoint's log.
    expect(
      await listDeliveries(runtime.db, "someone-else", flaky.endpointId, { limit: 10, offset: 0 }),
    ).toBeNull();

    // Manual redelivery: the same id and body once more.
    const first = log!.records[0]!;
    await redeliver(runtime.db, { tenantId: flaky.tenantId, deliveryId: first.id });
    await eventually(
      () =>
        flaky.receiver.attempts.filter((attempt) => attempt.id === first.alert_id && attempt.accepted)
          .length === 2,
      "the redelivery",
    );
    const copies = flaky.receiver.attempts.filter(
      (attempt) => attempt.id === first.alert_id && attempt.accepted,
    );
    expect(copies[1]!.body).toBe(copies[0]!.body);
    await expect(redeliver(runtime.db, { tenantId: "someone-else", deliveryId: first.id })).rejects.toThrow(
      /no delivery/,
    );
  });

  it("an endpoint that keeps failing is disabled, and the tenant's people are told by mail", async () => {
    const broken = await tenantWithEndpoint("broken", "broken-example.com", () => 500);
    await addUser(
      runtime.store,
      runtime.db,
      dataKeys,
      { tenantId: broken.tenantId, email: "owner@broken-example.com", role: "admin", linkTtlMs: 60_000 },
      { causedBy: "test" },
    );
    await eventually(
      async () =>
        (
          await runtime.db
            .selectFrom("user_role")
            .select("user_id")
            .where("tenant_id", "=", broken.tenantId)
            .execute()
        ).length === 1,
      "the user's role projected",
    );
    await appendAggregateReports(
      runtime.store,
      reportsWithNewSenders("broken-example.com", "broken", ["203.0.113.77"]),
    );
    await eventually(
      () => smtp.mails.some((mail) => /webhook disabled/.test(mail.header("subject") ?? "")),
      "the mail saying the endpoint was disabled",
    );
    const endpoint = await runtime.db
      .selectFrom("webhook_endpoint")
      .selectAll()
      .where("endpoint_id", "=", broken.endpointId)
      .executeTakeFirstOrThrow();
    expect(endpoint.enabled).toBe(false);
    expect(endpoint.disabled_reason).toMatch(/last: http_status 500$/);
    const mails = smtp.mails.filter((mail) => mail.to.includes("owner@broken-example.com"));
    // The new-sender alert itself, and the endpoint's.
    expect(mails.map((mail) => mail.header("subject")).sort()).toEqual([
      "[dmarc-ledger] new sender for broken-example.com",
      "[dmarc-ledger] webhook disabled",
    ]);
    expect(mails.every((mail) => mail.from === "alerts@dmarc-ledger.test")).toBe(true);
    // Plain text and HTML.
    expect(mails[0]!.raw).toMatch(/text\/plain/);
    expect(mails[0]!.raw).toMatch(/text\/html/);
    // Nobody of another tenant got mail about it.
    expect(smtp.mails.every((mail) => mail.to.every((to) => to === "owner@broken-example.com"))).toBe(true);

    // Enabled again: redelivery works.
    await changeEndpoint(
      runtime.store,
      { tenantId: broken.tenantId, endpointId: broken.endpointId, enabled: true },
      { causedBy: "test" },
      { allowPrivate: true },
    );
  });

  it("mail to a relay that is down is retried until it takes it, once", async () => {
    smtp.down = true;
    const before = smtp.mails.length;
    const tenant = await tenantWithEndpoint("mailed", "mailed-example.com", () => 204);
    await addUser(
      runtime.store,
      runtime.db,
      dataKeys,
      { tenantId: tenant.tenantId, email: "ops@mailed-example.com", role: "viewer", linkTtlMs: 60_000 },
      { causedBy: "test" },
    );
    await eventually(
      async () =>
        (
          await runtime.db
            .selectFrom("user_role")
            .select("user_id")
            .where("tenant_id", "=", tenant.tenantId)
            .execute()
        ).length === 1,
      "the user's role projected",
    );
    await appendAggregateReports(
      runtime.store,
      reportsWithNewSenders("mailed-example.com", "mailed", ["203.0.113.99"]),
    );
    await eventually(() => smtp.refused >= 2, "refused attempts");
    smtp.down = false;
    await eventually(() => smtp.mails.length === before + 1, "the mail once the relay is back");
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(smtp.mails.slice(before).map((mail) => [mail.to, mail.header("subject")])).toEqual([
      [["ops@mailed-example.com"], "[dmarc-ledger] new sender for mailed-example.com"],
    ]);
    expect(smtp.mails.at(-1)!.to).toEqual(["ops@mailed-example.com"]);
  });

  it("makes each person's digest of a period once, and sends it once", async () => {
    const before = smtp.mails.length;
    // The week that holds today is the last whole week a week from now.
    const later = new Date(Date.now() + 7 * day * 1000);
    // The people of the two tenants with people: broken's owner and mailed's ops.
    expect(await scheduleDigests(runtime.db, "weekly", later)).toBe(2);
    expect(await scheduleDigests(runtime.db, "weekly", later)).toBe(0);
    await eventually(() => smtp.mails.length === before + 2, "two digests");
    await new Promise((resolve) => setTimeout(resolve, 500));
    const digests = smtp.mails.slice(before);
    expect(digests.map((mail) => mail.to[0]).sort()).toEqual([
      "ops@mailed-example.com",
      "owner@broken-example.com",
    ]);
    expect(digests.every((mail) => /weekly digest/.test(mail.header("subject") ?? ""))).toBe(true);
    const owners = digests.find((mail) => mail.to[0] === "owner@broken-example.com")!;
    // broken's reports: 5 + 5 messages, all passing, begun yesterday; its two senders first seen today.
    const yesterdayInWeek = new Date().getUTCDay() !== 1;
    const text = owners.raw.replace(/=\r?\n/g, "");
    expect(text).toContain(
      yesterdayInWeek
        ? "broken-example.com: 10 messages, 100.0% passing DMARC, 2 new sender(s): 192.0.2.1, 203.0.113.77"
        : "broken-example.com: 0 messages, no messages, 2 new sender(s): 192.0.2.1, 203.0.113.77",
    );
    expect(text).toContain("The webhook endpoint");
    expect(text).not.toContain("mailed-example.com");
    expect(owners.raw).toMatch(/text\/html/);
  });

  it("forgets an erased person's address: their mail rows go", async () => {
    const owner = await mailRowOf("owner@broken-example.com");
    const rows = () =>
      Promise.all(
        (["alert_email", "alert_digest"] as const).map((table) =>
          runtime.db.selectFrom(table).select("user_id").where("user_id", "=", owner.user_id).execute(),
        ),
      );
    expect((await rows()).map((found) => found.length > 0)).toEqual([true, true]);
    // As the tenant's erasure takes out its people: the owner had no other tenant, so is erased.
    const done = await removeTenantPeople(runtime.store, runtime.db, owner.tenant_id, { causedBy: "test" });
    expect(done).toMatchObject({ removed: 1, erased: 1 });
    await eventually(
      async () => (await rows()).every((found) => found.length === 0),
      "the erased person's mail rows gone",
    );
  });

  it("forgets the addresses its mail went to when the tenant is erased", async () => {
    const mailed = await mailRowOf("ops@mailed-example.com");
    const others = await runtime.db
      .selectFrom("alert_email")
      .select("email_id")
      .where("tenant_id", "!=", mailed.tenant_id)
      .execute();
    await runtime.store.append(
      `personal-data-${mailed.tenant_id}`,
      [
        newEvent(
          "TenantErased",
          {
            tenantId: mailed.tenant_id,
            scopes: [],
            keysShredded: 0,
            removed: { failureReports: 0, rawInputs: 0, users: 1 },
          },
          { causedBy: "test" },
        ),
      ],
      "any",
    );
    await eventually(
      async () =>
        (
          await runtime.db
            .selectFrom("alert_email")
            .select("email_id")
            .where("tenant_id", "=", mailed.tenant_id)
            .execute()
        ).length === 0 &&
        (
          await runtime.db
            .selectFrom("alert_digest")
            .select("digest_id")
            .where("tenant_id", "=", mailed.tenant_id)
            .execute()
        ).length === 0,
      "the erased tenant's mail rows gone",
    );
    expect(
      await runtime.db
        .selectFrom("alert_email")
        .select("email_id")
        .where("tenant_id", "!=", mailed.tenant_id)
        .execute(),
    ).toHaveLength(others.length);
  });

  it("refuses an endpoint on a private address unless allowed", async () => {
    const tenantId = (
      await createTenant(runtime.store, { name: "strict", region: "global" }, { causedBy: "test" })
    ).tenantId;
    await expect(
      addEndpoint(
        runtime.store,
        runtime.db,
        { tenantId, url: "http://127.0.0.1:8080/hook" },
        { causedBy: "test" },
        { allowPrivate: false, keys: dataKeys },
      ),
    ).rejects.toThrow(/not a public address/);
    await expect(
      addEndpoint(
        runtime.store,
        runtime.db,
        { tenantId, url: "ftp://example.com/" },
        { causedBy: "test" },
        { allowPrivate: false, keys: dataKeys },
      ),
    ).rejects.toThrow(/https:\/\//);
    expect(RefusedAddressError).toBeDefined();
  });
});
