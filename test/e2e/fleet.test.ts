/**
 * The service as a fleet (issue 27): two API, two projector and two intake processes, built and
 * run as production runs them, on a PostgreSQL primary and a streaming replica of their own
 * (initdb, pg_basebackup), on free loopback ports.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase, type TestDatabase } from "@dmarc-ledger/db/testing";
import { projectionsReached } from "@dmarc-ledger/projection-engine";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { addDomain, createTenant, issueApiKey } from "@dmarc-ledger/tenancy";
import { type Kysely, sql } from "kysely";
import nodemailer from "nodemailer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtEntry } from "../support/built-processes.js";
import { countersOf, readSimpleRows } from "../support/independent-aggregate.js";
import { testMasterKey } from "../support/master-key.js";
import {
  freePort,
  type PostgresCluster,
  type StreamingReplica,
  startPostgresCluster,
  startStreamingReplica,
} from "../support/postgres-cluster.js";
import { aggregateReportXml } from "../support/report-xml.js";
import { type BuiltProcess, startBuiltProcess, waitFor } from "../support/start-built-process.js";

const reportsDomain = "reports.fleet.test";
const policyDomain = "fleet-ledger.com";
/** 1,000 reports of 200 rows: the 200,000-row import the projector is killed in the middle of. */
const reportCount = 1000;
const rowsPerReport = 200;

interface Api {
  process: BuiltProcess;
  origin: string;
  get(path: string, key: string): Promise<Response>;
  put(path: string, key: string, form: Record<string, string>): Promise<Response>;
}

async function startApi(env: NodeJS.ProcessEnv): Promise<Api> {
  const port = await freePort();
  const process = await startBuiltProcess("apps/api/dist/main.js", { ...env, PORT: String(port) });
  const origin = `http://127.0.0.1:${port}`;
  const api: Api = {
    process,
    origin,
    get: (path, key) => fetch(`${origin}/api/${path}`, { headers: { Authorization: `Bearer ${key}` } }),
    put: (path, key, form) =>
      fetch(`${origin}/api/${path}`, {
        method: "PUT",
        headers: { Authorization: `Bearer ${key}` },
        body: new URLSearchParams(form),
      }),
  };
  await waitFor(
    () =>
      fetch(`${origin}/readyz`).then(
        (answer) => (answer.status === 200 ? true : undefined),
        () => undefined,
      ),
    `the API on ${port} to be ready (${process.stderr()})`,
  );
  return api;
}

async function startIntake(env: NodeJS.ProcessEnv): Promise<{ process: BuiltProcess; port: number }> {
  const process = await startBuiltProcess("apps/intake/dist/main.js", {
    ...env,
    REPORTS_DOMAIN: reportsDomain,
    SMTP_HOST: "127.0.0.1",
    SMTP_PORT: "0",
    INTAKE_PARSE_THREADS: "1",
  });
  const listening = await waitFor(
    () => process.lines.find((line) => line.msg === "SMTP intake listening"),
    "the SMTP intake to listen",
  );
  return { process, port: listening.port as number };
}

const stop = async (process: BuiltProcess) => {
  if (process.child.exitCode === null && process.child.signalCode === null) process.child.kill("SIGTERM");
  await process.exited;
};

/** A test's report files: `count` reports of `rows` rows on the policy domain, in `dir`. */
function writeReports(dir: string, count: number, rows: number): string[] {
  mkdirSync(dir, { recursive: true });
  const day = 86_400;
  const base = 1_790_000_000 - (1_790_000_000 % day);
  const files: string[] = [];
  for (let i = 0; i < count; i++) {
    const xml = aggregateReportXml({
      reportId: `fleet-${i}`,
      domain: policyDomain,
      organization: `receiver${i % 20}.example`,
      begin: base + (i % 30) * day,
      end: base + (i % 30) * day + day - 1,
      rows: Array.from({ length: rows }, (_, j) => ({
        sourceIp: `10.${i % 250}.${Math.floor(j / 250)}.${j % 250}`,
        count: ((i * 7 + j) % 50) + 1,
        dkim: j % 3 === 0 ? "fail" : "pass",
        spf: j % 5 === 0 ? "fail" : "pass",
        disposition: j % 7 === 0 ? "quarantine" : "none",
      })),
    });
    const file = join(dir, `report-${String(i).padStart(5, "0")}.xml`);
    writeFileSync(file, xml);
    files.push(file);
  }
  return files;
}

/** The read models' sums, by key, as text: equal in two databases when the same reports counted once. */
async function readModelSums(db: Kysely<unknown>): Promise<Record<string, string[]>> {
  const rowsOf = async (query: ReturnType<typeof sql<{ row: string }>>) =>
    (await query.execute(db)).rows.map((row) => row.row);
  return {
    agg_domain: await rowsOf(sql<{ row: string }>`select (to_jsonb(a))::text as row from agg_domain a
      order by domain, t`),
    agg_organization: await rowsOf(sql<{
      row: string;
    }>`select (to_jsonb(a))::text as row from agg_organization a
      order by 1`),
    agg_source: await rowsOf(sql<{ row: string }>`select concat_ws(' ', domain, source_ip, organization, t,
        disposition, arc, spf_domain, dkim_domain, dmarc_pass, sum(volume)) as row
      from agg_source group by domain, source_ip, organization, t, disposition, arc, spf_domain, dkim_domain,
        dmarc_pass order by 1`),
  };
}

describe("a fleet of processes on a primary and a streaming replica", () => {
  let primary: PostgresCluster;
  let replica: StreamingReplica;
  let runtime: Runtime;
  let work: string;
  const processes: BuiltProcess[] = [];
  const apis: Api[] = [];
  const projectors: BuiltProcess[] = [];
  const intakes: { process: BuiltProcess; port: number }[] = [];
  let tenantId: string;
  const keys: string[] = [];

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "dl-fleet-"));
    primary = await startPostgresCluster({ maxConnections: 300 });
    await primary.psql("create database ledger");
    replica = await startStreamingReplica(primary);
    const url = primary.url("ledger");
    runtime = await openRuntime({ DATABASE_URL: url });
    const created = await createTenant(
      runtime.store,
      { name: "fleet", region: "global" },
      { causedBy: "test" },
    );
    tenantId = created.tenantId;
    keys.push(created.apiKey);
    for (let i = 0; i < 2; i++)
      keys.push(
        (
          await issueApiKey(
            runtime.store,
            { tenantId, scopes: ["read", "write", "ingest"] },
            { causedBy: "test" },
          )
        ).apiKey,
      );
    await addDomain(runtime.store, { tenantId, domain: policyDomain }, { causedBy: "test" });

    const env = { DATABASE_URL: url, DATABASE_STATEMENT_TIMEOUT_MS: "120000" };
    for (let i = 0; i < 2; i++) {
      const projector = await startBuiltProcess("apps/projector/dist/main.js", {
        ...env,
        DNS_NAMESERVERS: "127.0.0.1:9",
      });
      projectors.push(projector);
      processes.push(projector);
    }
    const apiEnv = {
      ...env,
      DATABASE_REPLICA_URL: replica.url("ledger"),
      REPLICA_WAIT_MS: "500",
      // A window of 60 s: the rate-limit test's requests all fall in one.
      RATE_LIMIT_PER_SECOND: "1",
      RATE_LIMIT_BURST: "60",
    };
    for (let i = 0; i < 2; i++) {
      const api = await startApi(apiEnv);
      apis.push(api);
      processes.push(api.process);
    }
    for (let i = 0; i < 2; i++) {
      const intake = await startIntake(env);
      intakes.push(intake);
      processes.push(intake.process);
    }
  }, 300_000);

  afterAll(async () => {
    await Promise.all(processes.map(stop));
    await runtime?.close();
    await replica?.remove();
    await primary?.remove();
    if (work) rmSync(work, { recursive: true, force: true });
  }, 120_000);

  it("shares the projections between the projectors", async () => {
    const owners = await waitFor(async () => {
      const { rows } = await sql<{ owner: string }>`select distinct owner from projection_lease
        where name like 'projection:%' and expires_at > now()`.execute(runtime.db);
      return rows.length === 2 ? rows : undefined;
    }, "both projectors to run projections");
    const pids = owners.map((row) => Number(row.owner.split(":")[1])).sort();
    expect(pids).toEqual(projectors.map((projector) => projector.child.pid!).sort());
  });

  it("shows a write at once through another API process, from the primary while the replica is behind", async () => {
    const [writer, reader] = [keys[0]!, keys[2]!];
    await replica.caughtUp(primary);
    await replica.psql("select pg_wal_replay_pause()");
    try {
      for (let i = 0; i < 3; i++) {
        const domain = `ryw-${i}-fleet.com`;
        const added = await apis[i % 2]!.put("add-domain", writer, { domain });
        expect(added.status, await added.clone().text()).toBe(200);
        const listed = (await (await apis[(i + 1) % 2]!.get("domains?per_page=100", writer)).json()) as {
          records: { Domain: string }[];
        };
        expect(listed.records.map((record) => record.Domain)).toContain(domain);
      }
      // Another caller, who wrote nothing, reads the replica: still without them while it is paused.
      const stale = (await (await apis[1]!.get("domains?per_page=100", reader)).json()) as {
        records: { Domain: string }[];
      };
      expect(stale.records.map((record) => record.Domain)).not.toContain("ryw-0-fleet.com");
      const ready = (await (await fetch(`${apis[1]!.origin}/readyz`)).json()) as {
        replica: { status: string; lagBytes: number };
      };
      expect(ready.replica.status).toBe("streaming");
      expect(ready.replica.lagBytes).toBeGreaterThan(0);
    } finally {
      await replica.psql("select pg_wal_replay_resume()");
    }
    await replica.caughtUp(primary);
    const fresh = (await (await apis[1]!.get("domains?per_page=100", reader)).json()) as {
      records: { Domain: string }[];
    };
    expect(fresh.records.map((record) => record.Domain)).toContain("ryw-0-fleet.com");
  });

  it("holds one rate limit for a key across the API processes", async () => {
    const key = keys[1]!;
    const statuses: number[] = [];
    for (let i = 0; i < 120; i++) statuses.push((await apis[i % 2]!.get("domains", key)).status);
    expect(statuses.slice(0, 60)).toEqual(Array(60).fill(200));
    expect(statuses.slice(60)).toEqual(Array(60).fill(429));
  });

  it("loses nothing and counts nothing twice when the projector running a projection is killed mid-import", async () => {
    const files = writeReports(join(work, "reports"), reportCount, rowsPerReport);
    const answers: string[] = [];
    const send = async (intake: { port: number }, file: string) => {
      const transport = nodemailer.createTransport({ host: "127.0.0.1", port: intake.port, secure: false });
      try {
        const info = await transport.sendMail({
          from: "dmarc@receiver.test",
          to: `rua@${reportsDomain}`,
          subject: `Report domain: ${policyDomain}`,
          attachments: [{ filename: "report.xml", path: file }],
        });
        answers.push(info.response ?? "");
      } finally {
        transport.close();
      }
    };
    // The first ten reach both intakes at once: one stores each, the other finds it stored.
    await Promise.all(files.slice(0, 10).flatMap((file) => intakes.map((intake) => send(intake, file))));
    const rest = files.slice(10);
    let next = 0;
    let killed: BuiltProcess | null = null;
    const killOwner = async () => {
      const { rows } = await sql<{ owner: string }>`select owner from projection_lease
          where name = 'projection:aggregate_by_domain'`.execute(runtime.db);
      const pid = Number(rows[0]!.owner.split(":")[1]);
      killed = projectors.find((projector) => projector.child.pid === pid)!;
      killed.child.kill("SIGKILL");
    };
    const sender = async (intake: { port: number }) => {
      while (next < rest.length) {
        const file = rest[next++]!;
        await send(intake, file);
        if (killed === null && answers.length >= reportCount * 0.4) await killOwner();
      }
    };
    await Promise.all(intakes.flatMap((intake) => [sender(intake), sender(intake)]));
    expect(killed).not.toBeNull();
    expect(await killed!.exited).toBe(-1);
    expect(killed!.child.signalCode).toBe("SIGKILL");

    // Every message acknowledged, each report stored once.
    expect(answers).toHaveLength(reportCount + 10);
    expect(answers.every((answer) => /^250 OK: aggregate report (stored|duplicate)$/.test(answer))).toBe(
      true,
    );
    expect(answers.filter((answer) => answer.endsWith("stored"))).toHaveLength(reportCount);

    // The survivor takes the dead one's projections over and catches up.
    const head = (await runtime.store.headPosition())!;
    await waitFor(
      async () => ((await projectionsReached(runtime.db, allProjections, head)) ? true : undefined),
      "the projections to reach the head",
    );
    const survivor = projectors.find((projector) => projector !== killed)!;
    const { rows: owners } = await sql<{ owner: string }>`select distinct owner from projection_lease
        where name like 'projection:%' and expires_at > now()`.execute(runtime.db);
    expect(owners.map((row) => Number(row.owner.split(":")[1]))).toEqual([survivor.child.pid]);

    // Exactly the totals of the same files imported by one process into a database of its own.
    const reference: TestDatabase = await createTestDatabase("dl_fleet_reference");
    try {
      // Its output is lines for a person, not JSON: run apart from startBuiltProcess.
      const imported = spawn(
        process.execPath,
        [...(await builtEntry("apps/cli/dist/main.js")), "import", join(work, "reports")],
        {
          env: { PATH: process.env.PATH, MASTER_KEY: testMasterKey, DATABASE_URL: reference.url },
          stdio: ["ignore", "ignore", "pipe"],
        },
      );
      let importErrors = "";
      imported.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
        importErrors += chunk;
      });
      const [status] = (await once(imported, "close")) as [number | null];
      expect(status, importErrors).toBe(0);
      const one = await openRuntime({ DATABASE_URL: reference.url });
      try {
        const expected = await readModelSums(one.db as Kysely<unknown>);
        expect(expected.agg_domain.length).toBeGreaterThan(0);
        expect(await readModelSums(runtime.db as Kysely<unknown>)).toEqual(expected);
      } finally {
        await one.close();
      }
    } finally {
      await reference.drop();
    }

    // And the API, through the replica, answers what an independent reading of the files says.
    await replica.caughtUp(primary);
    const rows = readdirSync(join(work, "reports")).flatMap((name) =>
      readSimpleRows(join(work, "reports", name)),
    );
    expect(rows).toHaveLength(reportCount * rowsPerReport);
    const answer = (await (await apis[0]!.get("aggregate_by_domain?start=0", keys[0]!)).json()) as {
      records: Record<string, unknown>[];
    };
    const counters = countersOf(rows);
    expect(answer.records).toHaveLength(1);
    expect(answer.records[0]).toMatchObject({
      Volume: counters.Volume,
      DMARC: counters.DMARC,
      DKIMAligned: counters.DKIMAligned,
      SPFAligned: counters.SPFAligned,
    });
  }, 600_000);
});
