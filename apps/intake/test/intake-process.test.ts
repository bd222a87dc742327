import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { type AddressInfo, connect, createServer } from "node:net";
import { createTestDatabase, type TestDatabase } from "@dmarc-ledger/db/testing";
import { openRuntime } from "@dmarc-ledger/runtime";
import nodemailer from "nodemailer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtEntry } from "../../../test/support/built-processes.js";
import { aggregateCorpus } from "../../../test/support/corpus.js";
import { testMasterKey } from "../../../test/support/master-key.js";
import { startIntakeProcess, waitFor } from "./support/intake-process.js";

const report = `${aggregateCorpus}ikea.com!example.de!1538690400!1538776800.xml`;

describe("apps/intake/src/main.ts as a process", () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase("dl_intake_proc");
  });
  afterAll(async () => database?.drop());

  it("refuses to start on a wrong setting, naming it, in JSON", async () => {
    const { lines, exited } = await startIntakeProcess({
      DATABASE_URL: database.url,
      REPORTS_DOMAIN: "reports.test",
      SMTP_MAX_CONNECTIONS_PER_IP: "none",
      METRICS_PORT: "lots",
    });
    expect(await exited).toBe(1);
    const fatal = lines.find((line) => line.level === 60);
    expect(fatal?.msg).toContain("SMTP_MAX_CONNECTIONS_PER_IP");
    expect(fatal?.msg).toContain('METRICS_PORT: "lots" is not a port from 0 to 65535');
  });

  it("says in one JSON line, without a stack, that the database cannot be reached, and exits 1", async () => {
    const { lines, exited, stderr } = await startIntakeProcess({
      DATABASE_URL: "postgres://postgres@127.0.0.1:1/nowhere",
      REPORTS_DOMAIN: "reports.test",
      SMTP_PORT: "0",
    });
    expect(await exited).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 60, name: "intake" });
    expect(lines[0]!.msg).toMatch(/^cannot open the database: .*ECONNREFUSED/);
    expect(`${JSON.stringify(lines)}${stderr()}`).not.toMatch(/\n\s+at /);
  });

  it("stops cleanly, exit 0, on a SIGTERM that comes while it is still opening the database", async () => {
    // A "database" that takes the connection and never answers: the process waits in its start.
    const silent = createServer((socket) => socket.on("error", () => {}));
    const connected = once(silent, "connection");
    silent.listen(0, "127.0.0.1");
    await once(silent, "listening");
    try {
      const { child, lines, exited } = await startIntakeProcess({
        DATABASE_URL: `postgres://postgres@127.0.0.1:${(silent.address() as AddressInfo).port}/never`,
        REPORTS_DOMAIN: "reports.test",
        SMTP_PORT: "0",
      });
      await connected;
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      expect(lines.map((line) => line.msg)).toEqual(["stopping", "stopped"]);
    } finally {
      silent.close();
    }
  });

  it("says so when the SMTP port is taken, and exits 1", async () => {
    const taken = createServer().listen(0, "127.0.0.1");
    await once(taken, "listening");
    try {
      const { lines, exited } = await startIntakeProcess({
        DATABASE_URL: database.url,
        REPORTS_DOMAIN: "reports.test",
        SMTP_HOST: "127.0.0.1",
        SMTP_PORT: String((taken.address() as AddressInfo).port),
      });
      expect(await exited).toBe(1);
      expect(lines.at(-1)).toMatchObject({ level: 60 });
      expect(lines.at(-1)!.msg).toMatch(/^cannot start the intake: .*EADDRINUSE/);
    } finally {
      taken.close();
    }
  });

  it("writes human lines with LOG_FORMAT=pretty, honours LOG_LEVEL, and stops on SIGTERM", async () => {
    const run = async (env: NodeJS.ProcessEnv) => {
      const child = spawn(process.execPath, await builtEntry("apps/intake/dist/main.js"), {
        env: {
          PATH: process.env.PATH,
          DATABASE_URL: database.url,
          MASTER_KEY: testMasterKey,
          REPORTS_DOMAIN: "reports.test",
          ...env,
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
        out += chunk;
      });
      const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
      return { child, out: () => out, exited };
    };
    // At warn nothing is said while it starts, listens and stops.
    const port = await freePort();
    const quiet = await run({ SMTP_HOST: "127.0.0.1", SMTP_PORT: String(port), LOG_LEVEL: "warn" });
    await waitFor(() => connects(port).then((ok) => (ok ? true : undefined)), "the SMTP intake to listen");
    quiet.child.kill("SIGTERM");
    expect(await quiet.exited).toBe(0);
    expect(quiet.out()).toBe("");

    const pretty = await run({ SMTP_HOST: "127.0.0.1", SMTP_PORT: "0", LOG_FORMAT: "pretty" });
    await waitFor(
      () => (pretty.out().includes("receiving reports") ? true : undefined),
      "the intake to start",
    );
    pretty.child.kill("SIGTERM");
    expect(await pretty.exited).toBe(0);
    expect(() => JSON.parse(pretty.out().split("\n")[0]!)).toThrow();
    expect(pretty.out()).toMatch(/INFO.*SMTP intake listening/);
    expect(pretty.out()).toMatch(/INFO.*stopped/);
  });

  it("receives a report, counts it on its metrics port, and stops cleanly on SIGTERM", async () => {
    const { child, lines, exited } = await startIntakeProcess({
      DATABASE_URL: database.url,
      REPORTS_DOMAIN: "reports.test",
      SMTP_PORT: "0",
      SMTP_HOST: "127.0.0.1",
      METRICS_PORT: "0",
      LOG_LEVEL: "debug",
    });
    const metricsAt = await waitFor(
      () => lines.find((line) => line.msg === "metrics listening"),
      "the metrics server to listen",
    );
    expect(metricsAt.host).toBe("127.0.0.1");
    const scrape = async () => (await fetch(`http://127.0.0.1:${metricsAt.port}/metrics`)).text();
    expect(await scrape()).not.toMatch(/intake_inputs_total\{/);
    const listening = await waitFor(
      () => lines.find((line) => line.msg === "SMTP intake listening"),
      "the SMTP intake to listen",
    );
    const transport = nodemailer.createTransport({ host: "127.0.0.1", port: listening.port as number });
    const info = await transport.sendMail({
      from: "dmarc@receiver.test",
      to: "rua@reports.test",
      attachments: [{ filename: "ikea.xml", content: readFileSync(report) }],
    });
    transport.close();
    expect(info.response).toBe("250 OK: aggregate report stored");
    expect(lines.some((line) => line.msg.startsWith("SMTP message stored") && line.channel === "smtp")).toBe(
      true,
    );
    const metrics = await scrape();
    expect(metrics).toMatch(/^intake_inputs_total\{channel="smtp",status="stored"\} 1$/m);
    expect(metrics).toMatch(/^intake_parse_worker_failures_total 0$/m);
    expect(metrics).toMatch(/^process_cpu_seconds_total \d/m);

    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(lines.at(-1)?.msg).toBe("stopped");

    const runtime = await openRuntime({ DATABASE_URL: database.url });
    try {
      const events = await runtime.store.readAll("start", 100);
      expect(events.filter((event) => event.type === "AggregateReportReceived")).toHaveLength(1);
    } finally {
      await runtime.close();
    }
  });
});

async function freePort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
