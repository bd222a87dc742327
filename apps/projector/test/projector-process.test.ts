import { type ChildProcess, spawn } from "node:child_process";
import { createTestDatabase, type TestDatabase } from "@dmarc-ledger/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtEntry } from "../../../test/support/built-processes.js";

/** apps/projector/dist/main.js as production runs it, with only PATH and `env` in its environment. */
async function startProjector(env: NodeJS.ProcessEnv) {
  const child: ChildProcess = spawn(process.execPath, await builtEntry("apps/projector/dist/main.js"), {
    // No DNS server to reach: the Safe SPF process beside the projector has nothing to do here.
    env: { PATH: process.env.PATH, DNS_NAMESERVERS: "127.0.0.1:9", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    err += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
  const lines = () =>
    out
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { child, exited, lines, stderr: () => err };
}

describe("the projector as a process, with METRICS_PORT", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase("dl_projector_metrics");
  });
  afterAll(async () => database?.drop());

  it("serves its process metrics and the projections' lag, and stops on SIGTERM", async () => {
    const projector = await startProjector({ DATABASE_URL: database.url, METRICS_PORT: "0" });
    let port: number | undefined;
    for (let attempt = 0; attempt < 600 && port === undefined; attempt++) {
      port = projector.lines().find((line) => line.msg === "metrics listening")?.port as number | undefined;
      if (port === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(port, projector.stderr()).toBeTypeOf("number");
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(text).toMatch(/^projection_lag_events\{projection="domains"\} 0$/m);
    expect(text).toMatch(/^projection_lag_seconds\{projection="aggregate_by_domain"\} 0$/m);
    expect(text).toMatch(/^safe_spf_domains\{status="pending"\} 0$/m);
    expect(text).toMatch(/^process_cpu_seconds_total \d/m);
    projector.child.kill("SIGTERM");
    expect(await projector.exited).toBe(0);
    expect(projector.lines().at(-1)?.msg).toBe("stopped");
  });

  it("refuses a wrong METRICS_PORT before it starts, naming it", async () => {
    const projector = await startProjector({ DATABASE_URL: database.url, METRICS_PORT: "9x" });
    expect(await projector.exited).toBe(1);
    expect(projector.stderr()).toContain('METRICS_PORT: "9x" is not a port from 0 to 65535');
  });
});
