import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  type AlertsSettings,
  type AlertView,
  alertsSettings,
  listAlerts,
  type RunningAlerts,
  startAlerts,
} from "@dmarc-ledger/alerts";
import { parseSettings } from "@dmarc-ledger/config";
import { type RunningProjector, startProjector } from "@dmarc-ledger/projection-engine";
import { openRuntime, type Runtime, runtimeDataKeys } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import {
  type RunningSourceIpResolver,
  sourceIpResolverSettingsFromEnv,
  startSourceIpResolverFromSettings,
} from "@dmarc-ledger/source-names";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateCorpus } from "../support/corpus.js";
import { freePort } from "../support/postgres-cluster.js";
import { cli, postgresBackend } from "../support/service-harness.js";
import { type BuiltProcess, startBuiltProcess } from "../support/start-built-process.js";
import { eventually } from "../support/webhook-receiver.js";

/**
 * Alerts as findings (docs/alerts.md), on the real reports of the corpus for example.com: 13
 * reports from 1979 to 2024, one of them of 2,286 rows, imported at once as a backlog. The
 * alerts' clock is set, for each run, to a moment the test chooses; the figures are compared with
 * the API's answers, from the standalone API process over HTTP.
 */
const reportFiles = readdirSync(aggregateCorpus)
  .filter(
    (name) =>
      name.endsWith(".xml") &&
      readFileSync(`${aggregateCorpus}${name}`, "utf8").includes("<domain>example.com</domain>"),
  )
  .map((name) => `${aggregateCorpus}${name}`);

/** The report days of the files, read apart from the parser: each report's begin, UTC. */
const reportDays = [
  ...new Set(
    reportFiles.flatMap((path) => {
      const begin = /<begin>\s*(\d+)\s*<\/begin>/.exec(readFileSync(path, "utf8"))?.[1];
      return begin ? [new Date(Number(begin) * 1000).toISOString().slice(0, 10)] : [];
    }),
  ),
].sort();

const reportDayRules = new Set(["new_sender", "unapproved_sender", "dmarc_failure_share"]);

interface Listed<T> {
  total: number;
  records: T[];
}

/** One run: a fresh database, the reports imported at once, the alerts' clock running from `now`. */
async function backlogRun(now: Date, files: readonly string[] = reportFiles) {
  const offset = now.getTime() - Date.now();
  const backend = await postgresBackend();
  const created = JSON.parse((await cli(backend.env, "tenant", "create", "acme", "--json")).out) as {
    tenantId: string;
    apiKey: string;
  };
  expect((await cli(backend.env, "domain", "add", "acme", "example.com")).code).toBe(0);
  const runtime: Runtime = await openRuntime(backend.env);
  const settings: AlertsSettings = parseSettings(alertsSettings, {
    ALERT_NAME_WAIT: "0s",
    ALERT_SETTLE: "2s",
  });
  const projector: RunningProjector = startProjector({
    store: runtime.store,
    db: runtime.db,
    projections: allProjections,
  });
  // Sources named at first sight from the shipped databases, as the service does; no DNS.
  const resolver: RunningSourceIpResolver = startSourceIpResolverFromSettings(
    sourceIpResolverSettingsFromEnv({ SOURCE_IP_RESOLVER: "off" }),
    { store: runtime.store, db: runtime.db },
  );
  const alerts: RunningAlerts = startAlerts({
    store: runtime.store,
    db: runtime.db,
    settings,
    publishPollMs: 50,
    dataKeys: await runtimeDataKeys(runtime, backend.env),
    now: () => new Date(Date.now() + offset),
  });
  const port = await freePort();
  const api: BuiltProcess = await startBuiltProcess("apps/api/dist/main.js", {
    DATABASE_URL: backend.env.DATABASE_URL,
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}/api/`,
  });
  // The API answers once it has opened the database and the read models.
  await eventually(
    () =>
      fetch(`http://127.0.0.1:${port}/readyz`).then(
        (response) => response.ok,
        () => false,
      ),
    "the API ready",
    120_000,
  );
  const imported = await cli(backend.env, "import", ...files);
  expect(imported.code, imported.err).toBe(0);
  const get = async <T>(path: string): Promise<T> => {
    const response = await fetch(`http://127.0.0.1:${port}/api/${path}`, {
      headers: { Authorization: `Bearer ${created.apiKey}` },
    });
    expect(response.status, path).toBe(200);
    return (await response.json()) as T;
  };
  /** Every alert, once the evaluator has the whole store and nothing is waiting to be sent. */
  const settled = async (): Promise<AlertView[]> => {
    await eventually(
      async () => {
        // The last report's place in the store's global order (transaction << 64 | position).
        const last = await sql<{ at: string | null }>`
        select max((transaction_id::text::numeric * 18446744073709551616 + position)::text::numeric)::text as at
        from events where type in ('AggregateReportReceived', 'TlsReportReceived')`.execute(runtime.db);
        const head = last.rows[0]?.at ? BigInt(last.rows[0].at) : null;
        const waiting = await runtime.db
          .selectFrom("alert_finding" as never)
          .select((eb) => eb.fn.countAll<string>().as("n"))
          .where("pending" as never, "=", true as never)
          .executeTakeFirstOrThrow();
        const unpublished = await runtime.db
          .selectFrom("alert_outbox" as never)
          .select((eb) => eb.fn.countAll<string>().as("n"))
          .where("published" as never, "=", false as never)
          .executeTakeFirstOrThrow();
        const lag = await runtime.db
          .selectFrom("projection_checkpoint" as never)
          .select("position" as never)
          .where("projection" as never, "=", "alert_evaluator" as never)
          .executeTakeFirst();
        const reached = lag === undefined ? -1n : BigInt(String((lag as { position: unknown }).position));
        return Number(waiting.n) === 0 && Number(unpublished.n) === 0 && head !== null && reached >= head;
      },
      "the alerts settled",
      180_000,
    );
    return (await listAlerts(runtime.db as never, created.tenantId, { limit: 1000, offset: 0 })).records;
  };
  return {
    get,
    settled,
    runtime,
    async stop() {
      api.child.kill("SIGTERM");
      await api.exited;
      await alerts.stop();
      await resolver.stop();
      await projector.stop();
      await runtime.close();
      await backend.cleanup();
    },
  };
}

type Run = Awaited<ReturnType<typeof backlogRun>>;

describe("alerts are findings: a backlog of real reports", { timeout: 600_000 }, () => {
  it("has the corpus's example.com reports, from 1979 to 2024", () => {
    expect(reportFiles.length).toBeGreaterThanOrEqual(10);
    expect(reportDays[0]).toBe("1979-08-07");
    expect(reportDays.at(-1)).toBe("2024-03-31");
  });

  describe("imported today, years after their days", () => {
    let run: Run;
    beforeAll(async () => {
      run = await backlogRun(new Date());
    }, 300_000);
    afterAll(() => run?.stop(), 120_000);

    it("raises nothing about report days outside the windows, and says once how many it skipped", async () => {
      await eventually(
        async () => (await run.settled()).some((alert) => alert.rule === "backlog_skipped"),
        "the backlog notice",
        180_000,
      );
      // A while more: a second notice would have come by now (ten times ALERT_SETTLE).
      await new Promise((resolve) => setTimeout(resolve, 22_000));
      const alerts = await run.settled();
      expect(alerts.filter((alert) => reportDayRules.has(alert.rule))).toEqual([]);
      const notices = alerts.filter((alert) => alert.rule === "backlog_skipped");
      expect(notices).toHaveLength(1);
      const figures = notices[0]!.figures as { findings: number; oldestDay: string; newestDay: string };
      // At most one finding per report-day rule and day (the baseline's day raises no new sender).
      expect(figures.findings).toBeGreaterThanOrEqual(1);
      expect(figures.findings).toBeLessThanOrEqual(3 * reportDays.length);
      expect(reportDays).toContain(figures.oldestDay);
      expect(figures.newestDay).toBe(reportDays.at(-1));
    });
  });

  describe("imported the day after the newest report", () => {
    let run: Run;
    let alerts: AlertView[];
    const now = new Date(Date.parse(`${reportDays.at(-1)}T00:00:00Z`) + 36 * 3_600_000);
    const windowStart = new Date(now.getTime() - 3 * 86_400_000).toISOString().slice(0, 10);
    beforeAll(async () => {
      run = await backlogRun(now);
      await eventually(
        async () => (await run.settled()).some((alert) => alert.rule === "new_sender"),
        "the new senders' alert",
        180_000,
      );
      await new Promise((resolve) => setTimeout(resolve, 22_000));
      alerts = await run.settled();
    }, 300_000);
    afterAll(() => run?.stop(), 120_000);

    it("raises at most one alert per rule, domain and report day, all inside the window", () => {
      const findings = alerts.filter((alert) => reportDayRules.has(alert.rule));
      expect(findings.length).toBeGreaterThan(0);
      const firsts = findings.filter((alert) => alert.revises === null);
      const keys = firsts.map((alert) => `${alert.rule} ${alert.domain} ${alert.period.start.slice(0, 10)}`);
      expect(new Set(keys).size).toBe(keys.length);
      for (const alert of findings) expect(alert.period.start.slice(0, 10) >= windowStart).toBe(true);
      // The days before the window are counted instead.
      expect(
        alerts
          .filter((alert) => alert.rule === "backlog_skipped")
          .map((alert) => [alert.raised_at, alert.summary]),
      ).toHaveLength(1);
    });

    it("lists the new senders of the big report's day in one alert, with the API's figures for that day", async () => {
      const day = reportDays.at(-1)!;
      const found = alerts.filter(
        (alert) => alert.rule === "new_sender" && alert.period.start.startsWith(day),
      );
      expect(found).toHaveLength(1);
      const alert = found[0]!;
      expect(alert.so_far).toBe(true);
      const start = Date.parse(`${day}T00:00:00Z`) / 1000;
      const senders = await run.get<Listed<{ Service: string; Volume: string; DMARC: string }>>(
        `aggregate_by_sender?domain=example.com&start=${start}&end=${start + 86_399}&per_page=1000`,
      );
      const byService = new Map(senders.records.map((record) => [record.Service, record]));
      // A sender with no service or base domain is listed by its address: the API's per source.
      const sources: { SourceIp: string; Volume: string; DMARC: string }[] = [];
      for (let page = 1; ; page++) {
        const answer = await run.get<Listed<{ SourceIp: string; Volume: string; DMARC: string }>>(
          `aggregate_by_source?domain=example.com&start=${start}&end=${start + 86_399}&per_page=1000&page=${page}`,
        );
        sources.push(...answer.records);
        if (sources.length >= answer.total || answer.records.length === 0) break;
      }
      const byAddress = new Map<string, { Volume: number; DMARC: number }>();
      for (const record of sources) {
        const sum = byAddress.get(record.SourceIp) ?? { Volume: 0, DMARC: 0 };
        sum.Volume += Number(record.Volume);
        sum.DMARC += Number(record.DMARC);
        byAddress.set(record.SourceIp, sum);
      }
      expect(alert.items.length).toBeGreaterThan(1);
      const items = alert.items as {
        sender: string;
        senderKind: string;
        messages: number;
        dmarcPass: number;
      }[];
      for (const item of items) {
        const record =
          item.senderKind === "ip"
            ? byAddress.get(item.sender)
            : (() => {
                const named = byService.get(item.sender);
                return named && { Volume: Number(named.Volume), DMARC: Number(named.DMARC) };
              })();
        expect(record, item.sender).toBeDefined();
        expect(item.messages, item.sender).toBe(record!.Volume);
        expect(item.dmarcPass, item.sender).toBe(record!.DMARC);
      }
    });

    it("gives the failure share of each day it raised the API's figures for that day", async () => {
      const shares = alerts.filter((alert) => alert.rule === "dmarc_failure_share");
      for (const alert of shares) {
        const day = alert.period.end.slice(0, 10);
        const start = Date.parse(`${day}T00:00:00Z`) / 1000;
        const series = await run.get<Listed<{ Date: string; Volume: string; DMARCUnaligned: string }>>(
          `aggregate_by_date?domain=example.com&start=${start}&end=${start + 86_399}`,
        );
        const record = series.records.find((entry) => entry.Date === day)!;
        expect(String(alert.figures.messages)).toBe(record.Volume);
        expect(String(alert.figures.failed)).toBe(record.DMARCUnaligned);
      }
    });
  });

  describe("SMTP TLS reports: RFC 8460's own example, the day after its day", () => {
    // 2016-04-01: 5,326 sessions successful and 303 failed (5.4%), three failure result types.
    const example = fileURLToPath(
      new URL("../../packages/tls-reports/test/fixtures/rfc8460-example.json", import.meta.url),
    );
    const day = "2016-04-01";
    const start = Date.parse(`${day}T00:00:00Z`) / 1000;
    let run: Run;
    let alerts: AlertView[];
    beforeAll(async () => {
      run = await backlogRun(new Date(Date.parse(`${day}T00:00:00Z`) + 30 * 3_600_000), [example]);
      await eventually(
        async () => (await run.settled()).filter((alert) => alert.rule.startsWith("tls_")).length >= 2,
        "the TLS alerts",
        180_000,
      );
      alerts = await run.settled();
    }, 300_000);
    afterAll(() => run?.stop(), 120_000);

    it("raises the failure share with the API's sessions of that day", async () => {
      const shares = alerts.filter((alert) => alert.rule === "tls_failure_share");
      expect(shares).toHaveLength(1);
      const series = await run.get<Listed<{ Date: string; Sessions: string; Failed: string }>>(
        `tls_by_date?domain=example.com&start=${start}&end=${start + 86_399}`,
      );
      const record = series.records.find((entry) => entry.Date === day)!;
      expect(String(shares[0]!.figures.sessions)).toBe(record.Sessions);
      expect(String(shares[0]!.figures.failedSessions)).toBe(record.Failed);
      expect(shares[0]!.so_far).toBe(true);
    });

    it("lists the result types new to the domain, each with the API's failed sessions", async () => {
      const found = alerts.filter((alert) => alert.rule === "tls_new_result");
      expect(found).toHaveLength(1);
      const failures = await run.get<Listed<{ ResultType: string; FailedSessions: string }>>(
        `tls_failures?domain=example.com&start=${start}&end=${start + 86_399}&per_page=1000`,
      );
      const byResult = new Map<string, number>();
      for (const record of failures.records)
        byResult.set(
          record.ResultType,
          (byResult.get(record.ResultType) ?? 0) + Number(record.FailedSessions),
        );
      const items = found[0]!.items as { resultType: string; failedSessions: number }[];
      expect(items.map((item) => item.resultType).sort()).toEqual([...byResult.keys()].sort());
      for (const item of items)
        expect(item.failedSessions, item.resultType).toBe(byResult.get(item.resultType));
    });
  });
});
