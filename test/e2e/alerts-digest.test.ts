/**
 * The daily digest says what changed against the day before, from real corpus reports imported
 * as an admin would (real PostgreSQL, a real SMTP sink), and is not made when nothing changed.
 */
import { readFileSync } from "node:fs";
import {
  type AlertsSettings,
  alertsSettings,
  buildDigest,
  type RunningAlerts,
  scheduleDigests,
  setAlertRule,
  startAlerts,
} from "@dmarc-ledger/alerts";
import { parseSettings } from "@dmarc-ledger/config";
import { type AggregateReport, parseReports } from "@dmarc-ledger/dmarc-reports";
import type { DataKeys } from "@dmarc-ledger/personal-data";
import { type RunningProjector, startProjector } from "@dmarc-ledger/projection-engine";
import { openRuntime, type Runtime, runtimeDataKeys } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { addDomain, createTenant } from "@dmarc-ledger/tenancy";
import { addUser } from "@dmarc-ledger/users";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateCorpus } from "../support/corpus.js";
import { type Backend, cli, postgresBackend } from "../support/service-harness.js";
import { type SmtpReceiver, startSmtpReceiver } from "../support/smtp-receiver.js";
import { eventually } from "../support/webhook-receiver.js";

const dayMs = 86_400_000;
/** Two reports of example.com for consecutive days: 2024-03-30 and 2024-03-31. */
const dayBefore = `${aggregateCorpus}protection.outlook.com!example.com!1711756800!1711843200.xml`;
const theDay = `${aggregateCorpus}!large-example.com!1711897200!1711983600.xml`;

async function parsed(file: string): Promise<AggregateReport> {
  const [report] = await parseReports(readFileSync(file));
  if (report?.kind !== "aggregate") throw new Error(`${file} is not an aggregate report`);
  return report.report;
}

/** A report's failure share in words, counted here: a message fails DMARC when neither DKIM nor SPF passes aligned. */
function failureShare(report: AggregateReport): string {
  const messages = report.rows.reduce((sum, row) => sum + row.count, 0);
  const failed = report.rows
    .filter((row) => row.policyDkim !== "pass" && row.policySpf !== "pass")
    .reduce((sum, row) => sum + row.count, 0);
  return `${((failed * 100) / messages).toFixed(1)}% of ${messages.toLocaleString("en-US")} messages failed DMARC`;
}

describe("the daily digest", () => {
  let backend: Backend;
  let runtime: Runtime;
  let dataKeys: DataKeys;
  let projector: RunningProjector;
  let alerts: RunningAlerts;
  let settings: AlertsSettings;
  let smtp: SmtpReceiver;
  let tenantId: string;

  beforeAll(async () => {
    backend = await postgresBackend();
    runtime = await openRuntime(backend.env);
    dataKeys = await runtimeDataKeys(runtime, backend.env);
    smtp = await startSmtpReceiver();
    settings = parseSettings(alertsSettings, {
      ALERT_SMTP_URL: smtp.url,
      ALERT_MAIL_FROM: "alerts@dmarc-ledger.test",
      // Digests are made by the test, for the days it names.
      ALERT_DIGEST: "off",
      PUBLIC_BASE_URL: "https://dmarc.example.org/api/",
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
    tenantId = (await createTenant(runtime.store, { name: "digest", region: "global" }, { causedBy: "test" }))
      .tenantId;
    await addDomain(runtime.store, { tenantId, domain: "example.com" }, { causedBy: "test" });
    // The digest is the subject here, not the alerts the import raises.
    for (const rule of ["new_sender", "unapproved_sender", "dmarc_failure_share"]) {
      await setAlertRule(runtime.store, { tenantId, rule, enabled: false }, { causedBy: "test" });
    }
    await addUser(
      runtime.store,
      runtime.db,
      dataKeys,
      { tenantId, email: "postmaster@example.com", role: "admin", linkTtlMs: 60_000 },
      { causedBy: "test" },
    );
    await eventually(
      async () =>
        (
          await runtime.db
            .selectFrom("alert_domain_owner")
            .select("domain")
            .where("tenant_id", "=", tenantId)
            .execute()
        ).length === 1 &&
        (
          await runtime.db
            .selectFrom("user_role")
            .select("user_id")
            .where("tenant_id", "=", tenantId)
            .execute()
        ).length === 1,
      "the domain and the person seen by the alerts",
    );
  });

  afterAll(async () => {
    await alerts?.stop();
    await projector?.stop();
    await smtp?.close();
    await runtime?.close();
    await backend?.cleanup();
  });

  it("is not made for a day in which nothing changed", async () => {
    // Yesterday: no report, no new sender, no alert.
    expect(await scheduleDigests(runtime.db, "daily", new Date())).toBe(0);
    const rows = await runtime.db.selectFrom("alert_digest").select("status").execute();
    expect(rows.map((row) => row.status)).toEqual(["unchanged"]);
    // Decided once: not looked at again, not sent.
    expect(await scheduleDigests(runtime.db, "daily", new Date())).toBe(0);
    expect(smtp.mails).toHaveLength(0);
  });

  it("names the day's new senders, once, with a link to the dashboard", async () => {
    const imported = await cli(backend.env, "import", dayBefore, theDay);
    expect(imported.code, imported.err).toBe(0);
    const reports = [await parsed(dayBefore), await parsed(theDay)];
    const senders = new Set(reports.flatMap((report) => report.rows.map((row) => row.sourceIp)));
    await eventually(
      async () =>
        (await runtime.db.selectFrom("alert_known_sender").select("source_ip").execute()).length ===
        senders.size,
      "the senders seen by the alerts",
      60_000,
    );
    // Today's digest, made tomorrow: the senders were first seen today.
    const tomorrow = new Date(Date.now() + dayMs);
    expect(await scheduleDigests(runtime.db, "daily", tomorrow, "https://dmarc.example.org/")).toBe(1);
    expect(await scheduleDigests(runtime.db, "daily", tomorrow, "https://dmarc.example.org/")).toBe(0);
    await eventually(() => smtp.mails.length === 1, "the digest");
    const [mail] = smtp.mails;
    expect(mail!.to).toEqual(["postmaster@example.com"]);
    const today = new Date().toISOString().slice(0, 10);
    expect(mail!.header("subject")).toBe(`[dmarc-ledger] daily digest, ${today}`);
    const text = mail!.raw.replace(/=\r?\n/g, "").replaceAll("=3D", "=");
    expect(text).toContain(`New senders (${senders.size}):`);
    expect(text).toMatch(/and \d+ more/);
    expect(text).toContain(
      `See it in the dashboard: https://dmarc.example.org/?period=custom&from=${today}&to=${today}`,
    );
    expect(mail!.raw).toMatch(/text\/html/);
  });

  it("compares each domain's failure share with the day before, by the reports' own days", async () => {
    const [before, day] = [await parsed(dayBefore), await parsed(theDay)];
    const digestOf = (first: string) =>
      buildDigest(runtime.db, tenantId, "daily", {
        start: new Date(`${first}T00:00:00Z`),
        end: new Date(Date.parse(`${first}T00:00:00Z`) + dayMs),
      });
    // The first report's day: reports where the day before had none.
    const first = await digestOf("2024-03-30");
    expect(first!.text).toContain(`- example.com: ${failureShare(before)} (the day before: no reports)`);
    // Nothing first seen or raised on that day: the share is what changed.
    expect(first!.text).toMatch(/New senders \(0\):\n- none/);
    expect(first!.text).toContain("Alerts raised (0):");
    // The day after the last report: none where the day before had some.
    const after = await digestOf("2024-04-01");
    expect(after!.text).toContain(`- example.com: no reports (the day before: ${failureShare(day)})`);
    // The second day fails as much as the first (by a point or less): nothing changed, no digest.
    expect(
      Math.abs(Number.parseFloat(failureShare(day)) - Number.parseFloat(failureShare(before))),
    ).toBeLessThan(1);
    expect(await digestOf("2024-03-31")).toBeNull();
  });
});
