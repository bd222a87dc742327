import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitForAlertsSettled } from "../support/alerts-settled.js";
import { corpusReportOnDay, utcDayStart } from "../support/recent-corpus.js";
import {
  type Backend,
  cli,
  postgresBackend,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";
import { waitForEverySourceNamed } from "../support/sources-named.js";
import { eventually } from "../support/webhook-receiver.js";

interface Listed<T> {
  status: string;
  total: number;
  records: T[];
}

interface Alert {
  id: string;
  rule: string;
  domain: string | null;
  period: { start: string; end: string };
  acknowledged_at: string | null;
  acknowledged_by: string | null;
}

const day = 86_400;

describe("acknowledging alerts, and GET alerts by state and period, on real reports", () => {
  let backend: Backend;
  let handle: ServiceHandle;
  let keyA: string;
  let keyB: string;
  const yesterday = utcDayStart(1);

  const upload = async (key: string, xml: string) => {
    const response = await fetch(new URL("reports", handle.service.apiRoot), {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/xml" },
      body: xml,
    });
    expect(response.status).toBe(202);
  };
  const alerts = async (query = "") => {
    const answer = await handle.get(`alerts?per_page=1000${query}`, keyA);
    expect(answer.status, answer.body).toBe(200);
    return answer.json as Listed<Alert>;
  };

  beforeAll(async () => {
    backend = await postgresBackend();
    keyA = JSON.parse((await cli(backend.env, "tenant", "create", "acme", "--json")).out).apiKey;
    keyB = JSON.parse((await cli(backend.env, "tenant", "create", "other", "--json")).out).apiKey;
    handle = await startTestService({
      ...backend.env,
      // Not waiting for the resolver to name a new sender: new_sender by its address at once.
      ALERT_NAME_WAIT: "0s",
      // A finding is sent as soon as the evaluator has it.
      ALERT_SETTLE: "0s",
      DNS_NAMESERVERS: "127.0.0.1:9",
    });
    expect((await handle.put("add_domain", keyA, { domain: "example.com" })).status).toBe(200);
    // A day of a handful of messages is a finding too: the failure share of yesterday is raised.
    const share = await handle.put("set_alert_rule", keyA, {
      rule: "dmarc_failure_share",
      enabled: "true",
      params: JSON.stringify({ min_messages: 1 }),
    });
    expect(share.status).toBe(200);
    // The domain's first report is its baseline; the next day's reports bring new senders.
    await upload(
      keyA,
      await corpusReportOnDay(
        "rfc9990-example.net!example.com!1700000000!1700086399.xml",
        utcDayStart(2),
        "ack",
      ),
    );
    await eventually(async () => {
      const inputs = (await handle.get("inputs", keyA)).json as Listed<{ Outcome: string }>;
      return inputs.records.some((input) => input.Outcome === "stored");
    }, "the baseline report stored");
    for (const name of [
      "usssa.com!example.com!1538784000!1538870399.xml",
      "veeam.com!example.com!1530133200!1530219600.xml",
      "addisonfoods.com!example.com!1536105600!1536191999.xml",
      "protection.outlook.com!example.com!1711756800!1711843200.xml",
    ]) {
      await upload(keyA, await corpusReportOnDay(name, yesterday, "ack"));
    }
    await eventually(
      async () => {
        const listed = await alerts();
        return (
          listed.records.some((alert) => alert.rule === "new_sender") &&
          listed.records.some((alert) => alert.rule === "dmarc_failure_share")
        );
      },
      "the new senders' and the failure share's alerts",
      60_000,
    );
    // Names arrive in the background and may raise more: the counts below are of every alert.
    await waitForEverySourceNamed(handle.runtime);
    await waitForAlertsSettled(handle.runtime);
  });

  afterAll(async () => {
    await handle?.stop();
    await backend?.cleanup();
  });

  it("lists every alert open until acknowledged, then apart, with who and when", async () => {
    const all = await alerts();
    expect(
      all.records.every((alert) => alert.acknowledged_at === null && alert.acknowledged_by === null),
    ).toBe(true);
    expect((await alerts("&state=open")).total).toBe(all.total);
    expect((await alerts("&state=acknowledged")).total).toBe(0);
    const chosen = all.records.find((alert) => alert.rule === "dmarc_failure_share")!;

    // Another tenant's key cannot acknowledge it, nor learn that it exists.
    const foreign = await handle.put("acknowledge_alert", keyB, { alert_id: chosen.id });
    expect(foreign.status).toBe(404);
    expect(foreign.json).toMatchObject({ code: "unknown_alert" });
    expect((await handle.put("acknowledge_alert", keyA, { alert_id: "alrt_nothing" })).status).toBe(404);
    expect((await handle.put("acknowledge_alert", keyA, {})).status).toBe(400);

    const before = Date.now();
    const done = await handle.put("acknowledge_alert", keyA, { alert_id: chosen.id });
    expect(done.status).toBe(200);
    // Read your write: the answer waits for the read model.
    const acknowledged = await alerts("&state=acknowledged");
    expect(acknowledged.records.map((alert) => alert.id)).toEqual([chosen.id]);
    const [record] = acknowledged.records;
    expect(record!.acknowledged_by).toMatch(/^key:/);
    expect(Date.parse(record!.acknowledged_at!)).toBeGreaterThanOrEqual(before - 1000);
    const open = await alerts("&state=open");
    expect(open.total).toBe(all.total - 1);
    expect(open.records.map((alert) => alert.id)).not.toContain(chosen.id);

    // Again: nothing changes, not even the time.
    expect((await handle.put("acknowledge_alert", keyA, { alert_id: chosen.id })).status).toBe(200);
    expect((await alerts("&state=acknowledged")).records).toEqual(acknowledged.records);
    expect((await handle.get("alerts?state=closed", keyA)).status).toBe(400);
  });

  it("filters by the period the alert is about: the alerts whose period meets it", async () => {
    const all = (await alerts()).records;
    const meets = (start: number, end: number) =>
      all
        .filter(
          (alert) =>
            Date.parse(alert.period.start) <= end * 1000 + 999 &&
            Date.parse(alert.period.end) >= start * 1000,
        )
        .map((alert) => alert.id);
    const ofYesterday = await alerts(`&start=${yesterday}&end=${yesterday + day - 1}`);
    expect(ofYesterday.records.map((alert) => alert.id)).toEqual(meets(yesterday, yesterday + day - 1));
    expect(ofYesterday.total).toBeGreaterThan(0);
    // The corpus's own years hold none of these alerts: the reports were moved to recent days.
    const old = await alerts(`&start=${Date.UTC(2018, 0, 1) / 1000}&end=${Date.UTC(2018, 11, 31) / 1000}`);
    expect(old.total).toBe(0);
    expect((await handle.get(`alerts?start=${yesterday + day}&end=${yesterday}`, keyA)).status).toBe(400);
  });

  it("shows the acknowledgement in the tenant's event feed", async () => {
    const feed = (await handle.get("events?limit=1000", keyA)).json as {
      events: { type: string; data: { alertId?: string; by?: string } }[];
    };
    const acknowledged = feed.events.filter((event) => event.type === "AlertAcknowledged");
    expect(acknowledged).toHaveLength(1);
    expect(acknowledged[0]!.data.by).toMatch(/^key:/);
    const other = (await handle.get("events?limit=1000", keyB)).json as { events: { type: string }[] };
    expect(other.events.some((event) => event.type === "AlertAcknowledged")).toBe(false);
  });
});
