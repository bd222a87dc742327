import { createTestDatabase, type TestDatabase } from "@dmarc-ledger/db/testing";
import nodemailer from "nodemailer";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { type PostgresCluster, startPostgresCluster } from "../support/postgres-cluster.js";
import { aggregateReportXml } from "../support/report-xml.js";
import { cli } from "../support/service-harness.js";
import { type BuiltProcess, startBuiltProcess, waitFor } from "../support/start-built-process.js";

// Issue 21, point 1: what PostgreSQL restarts, failovers and idle-connection reapers do to the
// service's connections must not end it. `dmarc-ledger start`, built, as production runs it.

const day = 86_400;
const begin = 1_735_689_600; // 2025-01-01

interface Service {
  process: BuiltProcess;
  apiRoot: string;
  origin: string;
  smtpPort: number;
  apiKey: string;
  stop(): Promise<number>;
}

async function startService(databaseUrl: string, extra: NodeJS.ProcessEnv = {}): Promise<Service> {
  const env = {
    DATABASE_URL: databaseUrl,
    REPORTS_DOMAIN: "reports.test",
    SMTP_HOST: "127.0.0.1",
    SMTP_PORT: "0",
    RATE_LIMIT_PER_SECOND: "100000",
    RATE_LIMIT_BURST: "100000",
    ...extra,
  };
  const created = await cli(env, "tenant", "create", "acme", "--json");
  expect(created.code, created.err).toBe(0);
  const { apiKey } = JSON.parse(created.out) as { apiKey: string };
  const started = await startBuiltProcess("apps/cli/bundle/dmarc-ledger.mjs", { ...env, PORT: "0" }, [
    "start",
  ]);
  const listening = await waitFor(
    () => started.lines.find((line) => line.msg === "listening"),
    "the service to listen",
  );
  const smtp = await waitFor(
    () => /Receiving reports: smtp [\d.]+:(\d+)/.exec(started.stderr())?.[1],
    "the SMTP intake",
  );
  const apiRoot = String(listening.apiRoot);
  const service: Service = {
    process: started,
    apiRoot,
    origin: new URL(apiRoot).origin,
    smtpPort: Number(smtp),
    apiKey,
    async stop() {
      if (started.child.exitCode === null) started.child.kill("SIGTERM");
      return started.exited;
    },
  };
  const added = await fetch(`${apiRoot}add-domain`, {
    method: "PUT",
    headers: { Authorization: `Bearer ${apiKey}` },
    body: new URLSearchParams({ domain: "faults.example.com" }),
  });
  expect(added.status).toBe(200);
  return service;
}

const report = (id: string, count: number) =>
  aggregateReportXml({
    reportId: id,
    domain: "faults.example.com",
    organization: "receiver.example",
    begin: begin + (count % 300) * day,
    end: begin + (count % 300) * day + day - 1,
    rows: [{ sourceIp: `192.0.2.${1 + (count % 250)}`, count }],
  });

/** Every status a request got; a 503 must say when to retry. */
class Outcomes {
  readonly statuses = new Map<number, number>();
  readonly problems: string[] = [];
  note(status: number, headers: Headers): void {
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
    if (status === 503 && !headers.get("retry-after")) this.problems.push("a 503 without Retry-After");
  }
}

/** Uploads until the service acknowledges (202); a 503 or a cut connection is retried, as a client would. */
async function upload(service: Service, xml: string, outcomes: Outcomes): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    try {
      const answer = await fetch(`${service.apiRoot}reports`, {
        method: "POST",
        headers: { Authorization: `Bearer ${service.apiKey}`, "Content-Type": "application/xml" },
        body: xml,
      });
      await answer.text();
      outcomes.note(answer.status, answer.headers);
      if (answer.status === 202) return;
      if (answer.status !== 503) throw new Error(`upload answered ${answer.status}`);
    } catch (error) {
      if (!(error instanceof TypeError)) throw error; // fetch failed: the connection went away
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error("an upload was never acknowledged");
}

/** Sends by SMTP until the intake answers 250; a 4xx (try later) is retried, as a mail server would. */
async function sendMail(service: Service, id: string, xml: string): Promise<void> {
  const transport = nodemailer.createTransport({ host: "127.0.0.1", port: service.smtpPort, secure: false });
  try {
    for (let attempt = 0; attempt < 200; attempt++) {
      try {
        await transport.sendMail({
          from: "dmarc@receiver.example",
          to: "rua@reports.test",
          subject: `Report domain: faults.example.com Report-ID: ${id}`,
          text: "A DMARC aggregate report.",
          attachments: [{ filename: `${id}.xml`, content: xml, contentType: "application/xml" }],
        });
        return;
      } catch (error) {
        const code = (error as { responseCode?: number }).responseCode;
        if (code !== undefined && code < 400) throw error;
        if (code !== undefined && code >= 500) throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error("a mail was never accepted");
  } finally {
    transport.close();
  }
}

async function readUntil(stopAt: () => boolean, service: Service, outcomes: Outcomes): Promise<void> {
  const paths = ["aggregate_by_domain?start=0", "aggregate_by_source?start=0", "forensic?start=0"];
  for (let i = 0; !stopAt(); i++) {
    try {
      const answer = await fetch(`${service.apiRoot}${paths[i % paths.length]}`, {
        headers: { Authorization: `Bearer ${service.apiKey}` },
      });
      await answer.text();
      outcomes.note(answer.status, answer.headers);
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
      outcomes.problems.push(`a read failed: ${String(error)}`);
    }
  }
}

async function readyWithin(service: Service, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const answer = await fetch(`${service.origin}/readyz`).catch(() => null);
    if (answer?.status === 200) return true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}

async function storedReportIds(databaseUrl: string): Promise<Map<string, number>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; n: string }>(
      "select data::json->>'reportId' as id, count(*)::text as n from events where type = 'AggregateReportReceived' group by 1",
    );
    return new Map(rows.map((row) => [row.id, Number(row.n)]));
  } finally {
    await client.end();
  }
}

/** The tenant's volume over all time, through the API, once the projections hold `expected`. */
async function volumeReaches(service: Service, expected: number): Promise<number> {
  let volume = -1;
  for (let attempt = 0; attempt < 300 && volume !== expected; attempt++) {
    const answer = await fetch(`${service.apiRoot}aggregate_by_domain?start=0`, {
      headers: { Authorization: `Bearer ${service.apiKey}` },
    });
    if (answer.status === 200) {
      const json = (await answer.json()) as { records: { Volume: string }[] };
      volume = json.records.reduce((sum, record) => sum + Number(record.Volume), 0);
    }
    if (volume !== expected) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return volume;
}

describe("the service when PostgreSQL ends its connections (dmarc-ledger start, built)", () => {
  let database: TestDatabase | null = null;
  let cluster: PostgresCluster | null = null;
  let service: Service | null = null;

  afterEach(async () => {
    await service?.stop();
    service = null;
    await database?.drop();
    database = null;
    await cluster?.remove();
    cluster = null;
  });

  it("survives pg_terminate_backend of all its connections while it serves reads, uploads and SMTP, and stores each acknowledged report once", async () => {
    database = await createTestDatabase("dl_faults");
    service = await startService(database.url);
    const running = service;
    const outcomes = new Outcomes();
    let done = false;
    const sent: { id: string; count: number }[] = [];
    const uploads = (async () => {
      for (let i = 0; !done; i++) {
        const id = `upload-${i}`;
        await upload(running, report(id, i + 1), outcomes);
        sent.push({ id, count: i + 1 });
      }
    })();
    const mails = (async () => {
      for (let i = 0; !done; i++) {
        const id = `smtp-${i}`;
        await sendMail(running, id, report(id, 1000 + i));
        sent.push({ id, count: 1000 + i });
      }
    })();
    const reads = Promise.all([0, 1, 2].map(() => readUntil(() => done, running, outcomes)));

    // Three rounds: every connection of the service's database ended, whatever it was doing.
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    let terminated = 0;
    try {
      for (let round = 0; round < 3; round++) {
        await new Promise((resolve) => setTimeout(resolve, 800));
        const { rows } = await admin.query<{ n: number }>(
          `select count(pg_terminate_backend(pid))::int as n from pg_stat_activity
           where datname = current_database() and pid <> pg_backend_pid()`,
        );
        terminated += rows[0]!.n;
      }
      await new Promise((resolve) => setTimeout(resolve, 800));
    } finally {
      await admin.end();
    }
    done = true;
    await Promise.all([uploads, mails, reads]);

    expect(terminated).toBeGreaterThan(0);
    expect(running.process.child.exitCode, running.process.stderr()).toBeNull();
    expect(outcomes.problems).toEqual([]);
    expect([...outcomes.statuses.keys()].every((status) => [200, 202, 503].includes(status))).toBe(true);
    expect(sent.filter((r) => r.id.startsWith("upload-")).length).toBeGreaterThan(0);
    expect(sent.filter((r) => r.id.startsWith("smtp-")).length).toBeGreaterThan(0);
    expect(await readyWithin(running, 30_000)).toBe(true);

    // Each acknowledged report is stored once, and none that was not sent.
    const stored = await storedReportIds(database.url);
    expect(new Set(stored.keys())).toEqual(new Set(sent.map((r) => r.id)));
    expect([...stored.values()].every((n) => n === 1)).toBe(true);
    // And counted once: the projector resumed from its checkpoint.
    const expected = sent.reduce((sum, r) => sum + r.count, 0);
    expect(await volumeReaches(running, expected)).toBe(expected);
    expect(running.process.lines.some((line) => line.msg.startsWith("a database connection was lost"))).toBe(
      true,
    );
    // And it still stops cleanly.
    expect(await running.stop()).toBe(0);
  });

  it("survives a restart of the PostgreSQL server: not ready while it is down, ready and current after", async () => {
    cluster = await startPostgresCluster();
    service = await startService(cluster.url());
    const running = service;
    const outcomes = new Outcomes();
    let done = false;
    const reads = Promise.all([0, 1].map(() => readUntil(() => done, running, outcomes)));
    await upload(running, report("before-restart", 7), outcomes);

    await cluster.stop();
    // Down: alive, not ready, and saying why.
    let reason = "";
    for (let attempt = 0; attempt < 100 && !reason; attempt++) {
      const answer = await fetch(`${running.origin}/readyz`);
      if (answer.status === 503) reason = ((await answer.json()) as { reason: string }).reason;
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(reason).toMatch(/database is unreachable/);
    expect((await fetch(`${running.origin}/healthz`)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await cluster.start();

    expect(await readyWithin(running, 60_000)).toBe(true);
    await upload(running, report("after-restart", 11), outcomes);
    done = true;
    await reads;
    expect(running.process.child.exitCode, running.process.stderr()).toBeNull();
    expect(outcomes.problems).toEqual([]);
    expect([...outcomes.statuses.keys()].every((status) => [200, 202, 503].includes(status))).toBe(true);
    expect(outcomes.statuses.get(503) ?? 0).toBeGreaterThan(0);
    expect(await volumeReaches(running, 18)).toBe(18);
    expect(await running.stop()).toBe(0);
  });

  it("stops within STOP_TIMEOUT_MS on SIGTERM while a projection batch waits on a long query, and applies it once on the next start", async () => {
    database = await createTestDatabase("dl_faults");
    service = await startService(database.url, {
      STOP_TIMEOUT_MS: "3000",
      READ_YOUR_WRITES_TIMEOUT_MS: "500",
    });
    const outcomes = new Outcomes();
    await upload(service, report("first", 5), outcomes);
    expect(await volumeReaches(service, 5)).toBe(5);

    // Another session holds the by-domain table: the projector's next batch waits on it, as on a
    // query that runs for minutes.
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    try {
      await holder.query("begin");
      await holder.query("lock table agg_domain in access exclusive mode");
      // Stored and answered (the answer does not wait past READ_YOUR_WRITES_TIMEOUT_MS), then
      // the batch that applies it waits on the lock.
      await upload(service, report("second", 6), outcomes);
      const stopping = Date.now();
      service.process.child.kill("SIGTERM");
      const code = await service.process.exited;
      const tookMs = Date.now() - stopping;
      expect(tookMs).toBeLessThan(3000 + 2000);
      expect(code).toBe(0);
      expect(
        service.process.lines.some((line) => /cancelled the running statements|stopped/.test(line.msg)),
      ).toBe(true);
    } finally {
      await holder.query("rollback").catch(() => {});
      await holder.end();
    }
    // The batch rolled back with its checkpoint: the next start applies it, once.
    const again = await startBuiltProcess(
      "apps/cli/bundle/dmarc-ledger.mjs",
      { DATABASE_URL: database.url, PORT: "0", REPORTS_DOMAIN: "reports.test", SMTP_PORT: "0" },
      ["start"],
    );
    service = {
      ...service,
      process: again,
      stop: async () => {
        again.child.kill("SIGTERM");
        return again.exited;
      },
    };
    const listening = await waitFor(
      () => again.lines.find((line) => line.msg === "listening"),
      "the restart",
    );
    service.apiRoot = String(listening.apiRoot);
    expect(await volumeReaches(service, 11)).toBe(11);
  });
});
