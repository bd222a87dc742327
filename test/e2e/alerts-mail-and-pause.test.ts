/**
 * Alert mail a person reads (plain words, the finding's items, "so far", a link to the view) and
 * webhooks paused after a day of failures (kept deliveries, a notice to admins only, resumed by
 * hand with the CLI): real PostgreSQL, a real SMTP sink, a real webhook receiver, a clock moved a
 * day on.
 */
import { readFileSync } from "node:fs";
import {
  type AlertsSettings,
  addEndpoint,
  alertsSettings,
  listDeliveries,
  listEndpoints,
  mailItemLimit,
  type RunningAlerts,
  raise,
  startAlerts,
} from "@dmarc-ledger/alerts";
import { parseSettings } from "@dmarc-ledger/config";
import { type AggregateReport, parseReports } from "@dmarc-ledger/dmarc-reports";
import type { AlertItem } from "@dmarc-ledger/events";
import type { DataKeys } from "@dmarc-ledger/personal-data";
import { type RunningProjector, startProjector } from "@dmarc-ledger/projection-engine";
import { openRuntime, type Runtime, runtimeDataKeys } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { addDomain, createTenant } from "@dmarc-ledger/tenancy";
import { addUser } from "@dmarc-ledger/users";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateCorpus } from "../support/corpus.js";
import { type Backend, cli, postgresBackend } from "../support/service-harness.js";
import { type ReceivedMail, type SmtpReceiver, startSmtpReceiver } from "../support/smtp-receiver.js";
import { eventually, startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";

const hour = 3_600_000;

/** A mail's text as a reader sees it: quoted-printable undone. */
function readable(mail: ReceivedMail): string {
  const joined = mail.raw.replace(/=\r?\n/g, "");
  const bytes: number[] = [];
  for (let at = 0; at < joined.length; at++) {
    const hex = /^=([0-9A-F]{2})/.exec(joined.slice(at, at + 3));
    if (hex) {
      bytes.push(Number.parseInt(hex[1]!, 16));
      at += 2;
    } else bytes.push(...Buffer.from(joined[at]!, "utf8"));
  }
  return Buffer.from(bytes).toString("utf8");
}

/** The new senders of a real report: each source address with its messages and those passing DMARC. */
function sendersOf(report: AggregateReport): AlertItem[] {
  const bySource = new Map<string, { messages: number; dmarcPass: number }>();
  for (const row of report.rows) {
    const figures = bySource.get(row.sourceIp) ?? { messages: 0, dmarcPass: 0 };
    figures.messages += row.count;
    if (row.policyDkim === "pass" || row.policySpf === "pass") figures.dmarcPass += row.count;
    bySource.set(row.sourceIp, figures);
  }
  return [...bySource].map(([sourceIp, figures]) => ({ sourceIp, ...figures }));
}

/** Who sent a report: its organisation's name, or its address when the name is empty. */
const reporterOf = (report: AggregateReport) => report.orgName || report.organization || report.email;

async function corpusReport(name: string): Promise<AggregateReport> {
  const [parsed] = await parseReports(readFileSync(`${aggregateCorpus}${name}`));
  if (parsed?.kind !== "aggregate") throw new Error(`${name} is not an aggregate report`);
  return parsed.report;
}

describe("alert mail and paused webhooks", () => {
  let backend: Backend;
  let runtime: Runtime;
  let dataKeys: DataKeys;
  let projector: RunningProjector;
  let alerts: RunningAlerts;
  let settings: AlertsSettings;
  let smtp: SmtpReceiver;
  let receiver: WebhookReceiver;
  /** How far the webhook worker's clock is ahead of the real one. */
  let clockAhead = 0;

  beforeAll(async () => {
    backend = await postgresBackend();
    runtime = await openRuntime(backend.env);
    dataKeys = await runtimeDataKeys(runtime, backend.env);
    smtp = await startSmtpReceiver();
    receiver = await startWebhookReceiver();
    settings = parseSettings(alertsSettings, {
      WEBHOOK_RETRY_BASE: "50ms",
      WEBHOOK_RETRY_MAX: "100ms",
      WEBHOOK_PAUSE_AFTER: "24h",
      WEBHOOK_TIMEOUT: "2s",
      WEBHOOK_ALLOW_PRIVATE_ADDRESSES: "yes",
      ALERT_SMTP_URL: smtp.url,
      ALERT_MAIL_FROM: "alerts@dmarc-ledger.test",
      PUBLIC_BASE_URL: "https://dmarc.example.org/api/",
      // A finding is mailed as soon as it is decided, new senders by their address at once.
      ALERT_SETTLE: "0s",
      ALERT_NAME_WAIT: "0s",
    });
    projector = startProjector({ store: runtime.store, db: runtime.db, projections: allProjections });
    alerts = startAlerts({
      store: runtime.store,
      db: runtime.db,
      settings,
      dataKeys,
      publishPollMs: 20,
      now: () => new Date(Date.now() + clockAhead),
      onError: (error, what) => console.error(what, error),
    });
  });

  afterAll(async () => {
    await alerts?.stop();
    await projector?.stop();
    await receiver?.close();
    await smtp?.close();
    await runtime?.close();
    await backend?.cleanup();
  });

  let tenant: { tenantId: string; admin: string; viewer: string } | undefined;
  /** The tenant of the corpus's example.com with an admin and a viewer, both projected. */
  async function exampleTenant() {
    tenant ??= await tenantOf("example.com", "example");
    return tenant;
  }

  async function tenantOf(domain: string, tag: string) {
    const { tenantId } = await createTenant(
      runtime.store,
      { name: tag, region: "global" },
      { causedBy: "test" },
    );
    await addDomain(runtime.store, { tenantId, domain }, { causedBy: "test" });
    const people = { admin: `admin@${tag}.test`, viewer: `viewer@${tag}.test` };
    for (const [role, email] of Object.entries(people)) {
      await addUser(
        runtime.store,
        runtime.db,
        dataKeys,
        { tenantId, email, role: role as "admin" | "viewer", linkTtlMs: 60_000 },
        { causedBy: "test" },
      );
    }
    await eventually(
      async () =>
        (
          await runtime.db
            .selectFrom("user_role")
            .select("user_id")
            .where("tenant_id", "=", tenantId)
            .execute()
        ).length === 2,
      "the people's roles projected",
    );
    return { tenantId, ...people };
  }

  /** A new_sender finding of a report's day, its senders as items, as the evaluator raises one. */
  async function raiseNewSenders(
    tenantId: string,
    report: AggregateReport,
    options: { soFar: boolean; revises: string | null; key: string },
  ) {
    const items = sendersOf(report);
    const day = new Date(report.begin * 1000).toISOString().slice(0, 10);
    await raise(runtime.db, {
      tenantId,
      rule: "new_sender",
      domain: report.policy.domain,
      key: options.key,
      period: { start: `${day}T00:00:00.000Z`, end: `${day}T23:59:59.999Z` },
      summary: `${items.length} new senders for ${report.policy.domain} on ${day}, reported by ${reporterOf(report)}.`,
      figures: {
        senders: items.length,
        messages: items.reduce((sum, item) => sum + Number(item.messages), 0),
        reporter: reporterOf(report),
      },
      items,
      soFar: options.soFar,
      revises: options.revises,
      causedBy: [],
    });
    return { items, day };
  }

  it("mails a finding in plain words: its figures, its first senders, so far, and a link to the view", async () => {
    const report = await corpusReport("!large-example.com!1711897200!1711983600.xml");
    const domain = report.policy.domain;
    const tenant = await exampleTenant();
    const { items, day } = await raiseNewSenders(tenant.tenantId, report, {
      soFar: true,
      revises: null,
      key: "day:so-far",
    });
    expect(items.length).toBeGreaterThan(mailItemLimit);
    await eventually(
      () => smtp.mails.filter((mail) => mail.to.includes(tenant.admin)).length === 1,
      "the mail",
    );
    const mail = smtp.mails.find((m) => m.to.includes(tenant.admin))!;
    expect(mail.header("subject")).toBe(`[dmarc-ledger] new sender for ${domain}`);
    const text = readable(mail);
    // Words, not field names.
    expect(text).toContain(`Reported by: ${reporterOf(report)}`);
    expect(text).toContain(`Senders: ${items.length.toLocaleString("en-US")}`);
    expect(text).not.toMatch(/sourceIp|dmarcPass|senderKind/);
    // The first senders with their figures, then how many more.
    const first = items[0]!;
    expect(text).toContain(`New senders (${items.length.toLocaleString("en-US")}):`);
    expect(text).toContain(
      `- ${first.sourceIp}: Messages from it ${Number(first.messages).toLocaleString("en-US")}, Passing DMARC ${Number(first.dmarcPass).toLocaleString("en-US")}`,
    );
    const listedLines = text.split("\n").filter((line) => /^- \d/.test(line));
    expect(listedLines).toHaveLength(mailItemLimit);
    expect(text).toContain(`and ${items.length - mailItemLimit} more`);
    expect(text).toContain(`reports for ${day} may still arrive`);
    // The link opens the Senders view on the report's day and domain, under PUBLIC_BASE_URL.
    const link = `https://dmarc.example.org/senders?domain=${domain}&period=custom&from=${day}&to=${day}`;
    expect(text).toContain(`See it in the dashboard: ${link}`);
    // In the HTML part the same link, its & escaped.
    expect(text).toContain(`href="${link.replaceAll("&", "&amp;")}"`);
    expect(mail.raw).toMatch(/text\/plain/);
  });

  it("says that a later notice updates the earlier one", async () => {
    const report = await corpusReport("protection.outlook.com!example.com!1711756800!1711843200.xml");
    const tenant = await exampleTenant();
    const before = smtp.mails.filter((mail) => mail.to.includes(tenant.admin)).length;
    await raiseNewSenders(tenant.tenantId, report, { soFar: true, revises: null, key: "day:first" });
    await eventually(
      () => smtp.mails.filter((mail) => mail.to.includes(tenant.admin)).length === before + 1,
      "the first",
    );
    const earlier = await runtime.db
      .selectFrom("alert_outbox")
      .select("alert_id")
      .where("payload", "like", `%"key":"day:first"%`)
      .executeTakeFirstOrThrow();
    await raiseNewSenders(tenant.tenantId, report, {
      soFar: false,
      revises: earlier.alert_id,
      key: "day:second",
    });
    await eventually(
      () => smtp.mails.filter((mail) => mail.to.includes(tenant.admin)).length === before + 2,
      "the update",
    );
    const update = smtp.mails.filter((mail) => mail.to.includes(tenant.admin))[before + 1]!;
    expect(update.header("subject")).toBe(`[dmarc-ledger] new sender for ${report.policy.domain} (updated)`);
    const text = readable(update);
    expect(text).toContain(`This updates an earlier alert (${earlier.alert_id})`);
    expect(text).not.toContain("may still arrive");
  });

  it("pauses an endpoint failing for a day, keeps its deliveries, tells its admins only, and resumes by hand", async () => {
    const report = await corpusReport("veeam.com!example.com!1530133200!1530219600.xml");
    const tenant = await exampleTenant();
    receiver.answer = () => 503;
    const endpoint = await addEndpoint(
      runtime.store,
      runtime.db,
      { tenantId: tenant.tenantId, url: receiver.url },
      { causedBy: "test" },
      { allowPrivate: true, keys: dataKeys },
    );
    receiver.secret = endpoint.secret;
    await eventually(
      async () => (await listEndpoints(runtime.db, tenant.tenantId)).length === 1,
      "the endpoint projected",
    );
    await raiseNewSenders(tenant.tenantId, report, { soFar: false, revises: null, key: "day:before-pause" });
    await eventually(() => receiver.attempts.length >= 2, "failed attempts");
    const mailsBefore = smtp.mails.length;

    // A day and an hour later by the worker's clock: the next failure pauses it.
    clockAhead = 25 * hour;
    await eventually(
      async () => (await listEndpoints(runtime.db, tenant.tenantId))[0]!.paused_at !== null,
      "the endpoint paused",
    );
    const [paused] = await listEndpoints(runtime.db, tenant.tenantId);
    expect(paused!.enabled).toBe(true);
    expect(paused!.paused_reason).toMatch(
      /^no delivery succeeded for 25 h \(\d+ attempts in a row failed; last: http_status 503\)$/,
    );

    await eventually(
      () =>
        smtp.mails
          .slice(mailsBefore)
          .some((mail) => mail.header("subject") === "[dmarc-ledger] webhook paused"),
      "the pause notice",
    );
    const notices = smtp.mails.filter((mail) => mail.header("subject") === "[dmarc-ledger] webhook paused");
    expect(notices.map((mail) => mail.to)).toEqual([[tenant.admin]]);
    const notice = readable(notices[0]!);
    expect(notice).toContain("Why: no delivery succeeded for 25 h");
    expect(notice).toContain("Last successful delivery: never");
    expect(notice).toContain("See it in the dashboard: https://dmarc.example.org/settings");

    // Raised while paused: queued and kept, not tried.
    const attemptsWhenPaused = receiver.attempts.length;
    await raiseNewSenders(tenant.tenantId, report, { soFar: false, revises: null, key: "day:while-paused" });
    const pendingOf = async () =>
      (await listDeliveries(runtime.db, tenant.tenantId, endpoint.endpointId, { limit: 10, offset: 0 }))!
        .records;
    await eventually(async () => (await pendingOf()).length === 3, "three deliveries queued");
    const kept = await pendingOf();
    expect(kept.map((delivery) => delivery.status)).toEqual(["pending", "pending", "pending"]);
    expect(receiver.attempts.length).toBe(attemptsWhenPaused);

    // The CLI lists it as paused, with why.
    const listed = await cli(backend.env, "webhook", "list", tenant.tenantId);
    expect(listed.out).toContain(
      `${endpoint.endpointId}  ${receiver.url}  paused (${paused!.paused_reason})`,
    );

    // Resumed by hand, the receiver well again: every kept delivery arrives, signed, once.
    clockAhead = 0;
    receiver.answer = () => 200;
    const resumed = await cli(backend.env, "webhook", "enable", tenant.tenantId, endpoint.endpointId);
    expect(resumed.code, resumed.err).toBe(0);
    const keptIds = new Set(kept.map((delivery) => delivery.alert_id));
    await eventually(
      () => [...keptIds].every((id) => receiver.acceptedIds().has(id)),
      "the kept deliveries after the resume",
    );
    const accepted = receiver.attempts.filter((attempt) => attempt.accepted);
    expect(accepted.every((attempt) => attempt.verified)).toBe(true);
    expect(accepted.map((attempt) => attempt.id).sort()).toEqual([...keptIds].sort());
    const [after] = await listEndpoints(runtime.db, tenant.tenantId);
    expect(after!.paused_at).toBeNull();
    expect(after!.paused_reason).toBeNull();
  });

  it("mails the evaluator's own finding of an imported report in words, so far while its day lasts", async () => {
    const file = "protection.outlook.com!example.com!1711756800!1711843200.xml";
    const report = await corpusReport(file);
    const tenant = await exampleTenant();
    // The evening of the report's day: inside the rule's window, and its reports may still arrive.
    clockAhead = Date.parse("2024-03-30T20:00:00Z") - Date.now();
    // A domain's first report is its baseline (its senders known, no alert): an older one first.
    const baseline = "rfc9990-example.net!example.com!1700000000!1700086399.xml";
    const first = await cli(backend.env, "import", `${aggregateCorpus}${baseline}`);
    expect(first.code, first.err).toBe(0);
    const imported = await cli(backend.env, "import", `${aggregateCorpus}${file}`);
    expect(imported.code, imported.err).toBe(0);
    // The evaluator's alert of the finding (rule, domain, report day), then its mail by that id.
    const findingAlert = async () =>
      (
        await runtime.db
          .selectFrom("alert_outbox")
          .select("alert_id")
          .where("payload", "like", '%"rule":"new_sender"%"key":"day:2024-03-30"%')
          .executeTakeFirst()
      )?.alert_id;
    await eventually(async () => (await findingAlert()) !== undefined, "the finding's alert", 60_000);
    const alertId = (await findingAlert())!;
    const mailOf = () =>
      smtp.mails.find((m) => m.to.includes(tenant.admin) && m.header("X-Dmarc-Ledger-Alert-Id") === alertId);
    await eventually(() => mailOf() !== undefined, "the finding's mail");
    clockAhead = 0;
    const mail = mailOf()!;
    expect(mail.header("subject")).toBe("[dmarc-ledger] new sender for example.com");
    const text = readable(mail);
    const known = new Set(sendersOf(await corpusReport(baseline)).map((item) => item.sourceIp));
    const senders = sendersOf(report).filter((item) => !known.has(item.sourceIp));
    const messages = senders.reduce((sum, item) => sum + Number(item.messages), 0);
    expect(text).toContain(`New senders (${senders.length.toLocaleString("en-US")}):`);
    expect(text).toContain(`Messages: ${messages.toLocaleString("en-US")}`);
    // Senders without a name are named by their address, in words.
    expect(text).toContain("Named by its address (no name found)");
    expect(text).toContain("reports for 2024-03-30 may still arrive");
    expect(text).toContain(
      "See it in the dashboard: https://dmarc.example.org/senders?domain=example.com&period=custom&from=2024-03-30&to=2024-03-30",
    );
    // No field name is shown as such.
    const body = text.slice(text.indexOf("Content-Type: text/plain"));
    expect(body).not.toMatch(/senderKind|dmarcPass|sourceIp|^day:/m);
  });
});
