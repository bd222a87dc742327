import { type ChildProcess, spawn } from "node:child_process";
import { createTestDatabase, type TestDatabase } from "@dmarc-ledger/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtEntry } from "../../../test/support/built-processes.js";
import { dig } from "./support/dig.js";

/** The built apps/dns/src/main.ts, as production runs it. */
let main: string[];

function run(env: NodeJS.ProcessEnv): {
  child: ChildProcess;
  /** stdout: JSON log lines only. */
  lines: () => Record<string, unknown>[];
  /** stderr: what a person reads, such as why the process could not start. */
  errors: () => string;
  exited: Promise<number | null>;
} {
  const child = spawn(process.execPath, main, {
    env: { PATH: process.env.PATH, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr!.on("data", (chunk: Buffer) => {
    err += chunk.toString();
  });
  return {
    child,
    lines: () =>
      out
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    errors: () => err,
    exited: new Promise((resolve) => child.once("exit", (code) => resolve(code))),
  };
}

describe("apps/dns/src/main.ts, built, the process", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    main = await builtEntry("apps/dns/dist/main.js");
    database = await createTestDatabase("dl_dns_main");
  });
  afterAll(() => database?.drop());

  it("names each wrong variable and exits 1 before listening", async () => {
    const process = run({
      DATABASE_URL: database.url,
      DNS_PORT: "99999",
      DNS_REPORTS_MX: "mx.example.com",
      METRICS_PORT: "metrics",
    });
    const tooManyPerIp = run({
      DATABASE_URL: database.url,
      SAFE_SPF_ZONE: "z.test",
      DNS_REPORTS_MX: "10 mx.example.com",
      DNS_TCP_MAX_CONNECTIONS: "8",
      DNS_TCP_MAX_CONNECTIONS_PER_IP: "9",
    });
    expect(await tooManyPerIp.exited).toBe(1);
    expect(tooManyPerIp.errors()).toContain(
      "DNS_TCP_MAX_CONNECTIONS_PER_IP: 9 is more than DNS_TCP_MAX_CONNECTIONS (8)",
    );
    expect(tooManyPerIp.errors()).toContain("DNS_REPORTS_MX: needs REPORTS_DOMAIN");
    expect(await process.exited).toBe(1);
    expect(process.errors()).toMatch(/DNS_PORT: /);
    expect(process.errors()).toContain('METRICS_PORT: "metrics" is not a port from 0 to 65535');
    expect(process.errors()).toMatch(/DNS_REPORTS_MX: /);
    expect(process.lines()).toEqual([]);
    const badRefresh = run({
      DATABASE_URL: database.url,
      SAFE_SPF_ZONE: "z.test",
      SAFE_SPF_MIN_REFRESH: "soon",
    });
    expect(await badRefresh.exited).toBe(1);
    expect(badRefresh.errors()).toContain("SAFE_SPF_MIN_REFRESH");
    const missingZone = run({ DATABASE_URL: database.url });
    expect(await missingZone.exited).toBe(1);
    expect(missingZone.errors()).toContain("SAFE_SPF_ZONE");
  });

  it("answers, logs JSON at LOG_LEVEL, serves its metrics, and stops cleanly on SIGTERM", async () => {
    const process = run({
      DATABASE_URL: database.url,
      SAFE_SPF_ZONE: "spf.main.test",
      DNS_HOST: "127.0.0.1",
      DNS_PORT: "0",
      METRICS_PORT: "0",
      LOG_LEVEL: "info",
    });
    let port = 0;
    for (let attempt = 0; attempt < 600 && !port; attempt++) {
      const listening = process.lines().find((line) => line.msg === "DNS server listening");
      port = (listening?.port as number | undefined) ?? 0;
      if (!port) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(port).toBeGreaterThan(0);
    const soa = await dig(port, "spf.main.test", "SOA");
    expect(soa.answers[0]!.data).toMatch(/^ns1\.spf\.main\.test\. hostmaster\.spf\.main\.test\. /);
    // The metrics server starts after the DNS server: its line may come a little later.
    let metricsPort = 0;
    for (let attempt = 0; attempt < 600 && !metricsPort; attempt++) {
      const listening = process.lines().find((line) => line.msg === "metrics listening");
      metricsPort = (listening?.port as number | undefined) ?? 0;
      if (!metricsPort) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metrics).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
    process.child.kill("SIGTERM");
    expect(await process.exited).toBe(0);
    expect(process.lines().at(-1)).toMatchObject({ msg: "stopped", name: "dns" });
  });
});
