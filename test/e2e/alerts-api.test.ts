import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateReportXml } from "../support/report-xml.js";
import {
  type Backend,
  cli,
  postgresBackend,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";
import { eventually, startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";

const day = 86_400;
const today = Math.floor(Date.now() / 1000 / day) * day;

interface Listed<T> {
  status: string;
  total: number;
  records: T[];
}

describe("alerts over HTTP: rules, alerts, webhooks; reports imported through the API", () => {
  let backend: Backend;
  let handle: ServiceHandle;
  let keyA: string;
  let keyB: string;
  let receiver: WebhookReceiver;
  let webhookId: string;

  const upload = async (key: string, xml: string) => {
    const response = await fetch(new URL("reports", handle.service.apiRoot), {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/xml" },
      body: xml,
    });
    expect(response.status).toBe(202);
  };
  const report = (id: string, domain: string, ips: string[], failing = false) =>
    aggregateReportXml({
      reportId: id,
      domain,
      organization: "google.com",
      begin: today - day,
      end: today - 1,
      rows: ips.map((sourceIp) => ({
        sourceIp,
        count: 10,
        ...(failing ? { dkim: "fail", spf: "fail" } : {}),
      })),
    });

  beforeAll(async () => {
    backend = await postgresBackend();
    keyA = JSON.parse((await cli(backend.env, "tenant", "create", "acme", "--json")).out).apiKey;
    keyB = JSON.parse((await cli(backend.env, "tenant", "create", "other", "--json")).out).apiKey;
    handle = await startTestService({
      ...backend.env,
      WEBHOOK_ALLOW_PRIVATE_ADDRESSES: "yes",
      // Not waiting for the resolver to name a new sender: new_sender by its address at once.
      ALERT_NAME_WAIT: "0s",
      ALERT_SETTLE: "0s",
      WEBHOOK_RETRY_BASE: "50ms",
      WEBHOOK_RETRY_MAX: "100ms",
      DNS_NAMESERVERS: "127.0.0.1:9",
    });
    expect((await handle.put("add_domain", keyA, { domain: "acme-alerts.com" })).status).toBe(200);
    expect((await handle.put("add_domain", keyB, { domain: "other-alerts.com" })).status).toBe(200);
    // A person of acme's: with no relay configured (no ALERT_SMTP_URL), no mail is queued for them.
    const person = await cli(
      backend.env,
      "user",
      "add",
      "acme",
      "postmaster@acme-alerts.com",
      "--role",
      "viewer",
    );
    expect(person.code, person.err).toBe(0);
    receiver = await startWebhookReceiver();
  });

  afterAll(async () => {
    await handle?.stop();
    await receiver?.close();
    await backend?.cleanup();
  });

  it("lists every rule on by default, and sets one with its parameters checked", async () => {
    const rules = (await handle.get("alert_rules", keyA)).json as Listed<{
      rule: string;
      enabled: boolean;
      params: Record<string, number>;
      set: boolean;
    }>;
    expect(rules.records.length).toBe(12);
    expect(rules.records.every((rule) => rule.enabled && !rule.set)).toBe(true);
    const bad = await handle.put("set_alert_rule", keyA, {
      rule: "dmarc_failure_share",
      enabled: "true",
      params: JSON.stringify({ threshold_percent: 500, nonsense: 1 }),
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.json)).toMatch(/threshold_percent/);
    expect(JSON.stringify(bad.json)).toMatch(/nonsense/);
    const set = await handle.put("set_alert_rule", keyA, {
      rule: "dmarc_failure_share",
      enabled: "true",
      params: JSON.stringify({ threshold_percent: 50 }),
    });
    expect(set.status).toBe(200);
    const after = (await handle.get("alert_rules", keyA)).json as Listed<{
      rule: string;
      params: Record<string, number>;
      set: boolean;
    }>;
    const share = after.records.find((rule) => rule.rule === "dmarc_failure_share")!;
    expect(share).toMatchObject({
      set: true,
      params: { threshold_percent: 50, window_days: 1, min_messages: 20 },
    });
    // B's rules are its own.
    const other = (await handle.get("alert_rules", keyB)).json as Listed<{ set: boolean }>;
    expect(other.records.every((rule) => !rule.set)).toBe(true);
  });

  it("adds a webhook, shows its secret once, and delivers alerts of imported reports to it, signed", async () => {
    const added = await handle.put("add_webhook", keyA, {
      url: receiver.url,
      alert_types: "new_sender,dmarc_failure_share",
      description: "ops",
    });
    expect(added.status).toBe(200);
    const body = added.json as { webhook_id: string; secret: string };
    webhookId = body.webhook_id;
    receiver.secret = body.secret;
    const listed = await handle.get("webhooks", keyA);
    expect(listed.body).not.toContain(body.secret);
    expect((listed.json as Listed<{ id: string; alert_types: string[] }>).records).toMatchObject([
      { id: webhookId, alert_types: ["new_sender", "dmarc_failure_share"] },
    ]);
    expect(((await handle.get("webhooks", keyB)).json as Listed<unknown>).total).toBe(0);
    // A read-only key sees the endpoint's scheme and host, its path (a chat token's place) masked.
    const readKey = JSON.parse(
      (await cli(backend.env, "tenant", "key", "issue", "acme", "--scopes", "read", "--json")).out,
    ).apiKey as string;
    // The key is the service's once its projector has the CLI's event.
    await eventually(
      async () => (await handle.get("webhooks", readKey)).status === 200,
      "the read key known",
    );
    const viewed = await handle.get("webhooks", readKey);
    const receiverUrl = new URL(receiver.url);
    expect((viewed.json as Listed<{ url: string }>).records.map((record) => record.url)).toEqual([
      `http://${receiverUrl.host}/…`,
    ]);
    expect(viewed.body).not.toContain(receiverUrl.pathname);

    await upload(keyA, report("acme-1", "acme-alerts.com", ["192.0.2.1"]));
    // Two new senders, every message failing: one new_sender alert listing both, and the failure
    // share (20 of 30 > 50%).
    await upload(
      keyA,
      report("acme-2", "acme-alerts.com", ["192.0.2.1", "198.51.100.1", "198.51.100.2"], true),
    );
    await eventually(() => receiver.acceptedIds().size === 2, "two alerts");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.attempts.every((attempt) => attempt.verified)).toBe(true);
    const bodies = receiver.attempts.map((attempt) => JSON.parse(attempt.body).data);
    expect(bodies.map((data) => data.rule).sort()).toEqual(["dmarc_failure_share", "new_sender"]);
    const newSenders = bodies.find((data) => data.rule === "new_sender");
    expect(newSenders.items.map((item: { sender: string }) => item.sender).sort()).toEqual([
      "198.51.100.1",
      "198.51.100.2",
    ]);
    expect(newSenders.figures).toMatchObject({
      senders: 2,
      messages: 20,
      dmarcPass: 0,
      reporters: "google.com",
    });
    // No relay, no mail queue: the person's alerts are not kept for a channel that is not there.
    expect(await handle.runtime.db.selectFrom("alert_email").select("email_id").execute()).toEqual([]);

    // The alerts' read model may follow the deliveries by a moment (the projector applies AlertRaised).
    const listAlerts = async () =>
      (await handle.get("alerts", keyA)).json as Listed<{ id: string; rule: string; domain: string }>;
    await eventually(async () => (await listAlerts()).total === 2, "the alerts listed");
    const alerts = await listAlerts();
    expect(alerts.total).toBe(2);
    expect(new Set(alerts.records.map((alert) => alert.id))).toEqual(receiver.acceptedIds());
    expect(((await handle.get("alerts?rule=new_sender", keyA)).json as Listed<unknown>).total).toBe(1);
    expect(((await handle.get("alerts", keyB)).json as Listed<unknown>).total).toBe(0);
    expect((await handle.get("alerts?rule=nonsense", keyA)).status).toBe(400);
  });

  it("shows the delivery log, redelivers on request, and keeps both from other tenants", async () => {
    const log = (await handle.get(`webhook_deliveries?webhook_id=${webhookId}`, keyA)).json as Listed<{
      id: string;
      alert_id: string;
      status: string;
      attempts: number;
    }>;
    expect(log.total).toBe(2);
    // The endpoint's health says the same: delivered, none failing, none waiting.
    const listed = (await handle.get("webhooks", keyA)).json as Listed<{
      id: string;
      health: { last_success_at: string | null; failing_since: string | null; pending: number };
    }>;
    const health = listed.records.find((record) => record.id === webhookId)!.health;
    expect(health.last_success_at).not.toBeNull();
    expect(health).toMatchObject({ failing_since: null, pending: 0 });
    expect(log.records.every((record) => record.status === "delivered" && record.attempts === 1)).toBe(true);
    expect((await handle.get(`webhook_deliveries?webhook_id=${webhookId}`, keyB)).status).toBe(404);
    const first = log.records[0]!;
    expect((await handle.put("redeliver_webhook", keyB, { delivery_id: first.id })).status).toBe(404);
    expect((await handle.put("redeliver_webhook", keyA, { delivery_id: first.id })).status).toBe(200);
    await eventually(
      () => receiver.attempts.filter((attempt) => attempt.id === first.alert_id).length === 2,
      "the redelivery",
    );
  });

  it("changes and disables a webhook; a rule switched off raises nothing", async () => {
    expect(
      (await handle.put("change_webhook", keyB, { webhook_id: webhookId, enabled: "false" })).status,
    ).toBe(404);
    expect((await handle.put("set_alert_rule", keyA, { rule: "new_sender", enabled: "false" })).status).toBe(
      200,
    );
    const before = receiver.attempts.length;
    await upload(keyA, report("acme-3", "acme-alerts.com", ["203.0.113.50"]));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(receiver.attempts.length).toBe(before);
    expect(((await handle.get("alerts?rule=new_sender", keyA)).json as Listed<unknown>).total).toBe(1);
    expect(
      (await handle.put("change_webhook", keyA, { webhook_id: webhookId, url: "ftp://example.com/" })).status,
    ).toBe(400);
    expect(
      (await handle.put("change_webhook", keyA, { webhook_id: webhookId, enabled: "false" })).status,
    ).toBe(200);
    const listed = (await handle.get("webhooks", keyA)).json as Listed<{ enabled: boolean }>;
    expect(listed.records[0]!.enabled).toBe(false);
  });

  it("has CLI commands for the same", async () => {
    const rules = await cli(backend.env, "alert", "rules", "acme");
    expect(rules.out).toMatch(/^new_sender {2}off/m);
    expect(rules.out).toMatch(
      /^dmarc_failure_share {2}on {2}threshold_percent=50 window_days=1 min_messages=20/m,
    );
    expect((await cli(backend.env, "alert", "set", "acme", "new_sender", "--state", "on")).code).toBe(0);
    const bad = await cli(
      backend.env,
      "alert",
      "set",
      "acme",
      "no_reports",
      "--state",
      "on",
      "--param",
      "days=0",
    );
    expect(bad.code).not.toBe(0);
    expect(bad.err).toMatch(/days: a number from 1 to 365/);
    const listed = await cli(backend.env, "alert", "list", "acme", "--json");
    expect(listed.out.trim().split("\n")).toHaveLength(2);
    expect((await cli(backend.env, "alert", "list", "other")).out).toBe("No alerts.");
    // Without WEBHOOK_ALLOW_PRIVATE_ADDRESSES, a loopback endpoint is refused.
    const refused = await cli(backend.env, "webhook", "add", "acme", "http://127.0.0.1:9/hook");
    expect(refused.code).not.toBe(0);
    expect(refused.err).toMatch(/not a public address/);
    const added = await cli(
      { ...backend.env, WEBHOOK_ALLOW_PRIVATE_ADDRESSES: "yes" },
      "webhook",
      "add",
      "acme",
      "http://127.0.0.1:9/hook",
      "--json",
    );
    expect(JSON.parse(added.out).secret).toMatch(/^whsec_/);
    const webhooks = await cli(backend.env, "webhook", "list", "acme");
    expect(webhooks.out).toContain("http://127.0.0.1:9/hook");
    expect(webhooks.out).not.toContain(JSON.parse(added.out).secret);
    const deliveries = await cli(backend.env, "webhook", "deliveries", "acme", webhookId);
    expect(deliveries.out).toMatch(/delivered {2}1 attempt/);
    expect((await cli(backend.env, "webhook", "deliveries", "other", webhookId)).code).not.toBe(0);
  });

  it("answers as the OpenAPI document says", async () => {
    const doc = (await handle.get("openapi.json", keyA)).json as {
      components: { schemas: Record<string, object> };
    };
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    for (const [name, schema] of Object.entries(doc.components.schemas))
      ajv.addSchema(schema, `#/components/schemas/${name}`);
    for (const path of ["alert_rules", "alerts", "webhooks", `webhook_deliveries?webhook_id=${webhookId}`]) {
      const answer = await handle.get(path, keyA);
      const check = ajv.getSchema(`#/components/schemas/Response_${path.split("?")[0]}`)!;
      expect(check(answer.json), `${path}: ${JSON.stringify(check.errors)}`).toBe(true);
    }
  });
});
