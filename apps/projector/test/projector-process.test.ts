import { createTestDatabase, type TestDatabase } from "@dmarc-ledger/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBuiltProcess, waitFor } from "../../../test/support/start-built-process.js";

/** apps/projector/dist/main.js as production runs it. */
const startProjector = (env: NodeJS.ProcessEnv) =>
  // No DNS server to reach: the Safe SPF process beside the projector has nothing to do here.
  startBuiltProcess("apps/projector/dist/main.js", { DNS_NAMESERVERS: "127.0.0.1:9", ...env });

describe("the projector as a process, with METRICS_PORT", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase("dl_projector_metrics");
  });
  afterAll(async () => database?.drop());

  it("serves its process metrics and the projections' lag, and stops on SIGTERM", async () => {
    const projector = await startProjector({ DATABASE_URL: database.url, METRICS_PORT: "0" });
    const listening = await waitFor(
      () => projector.lines.find((line) => line.msg === "metrics listening"),
      "the metrics server to listen",
    );
    const port = listening.port as number;
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(text).toMatch(/^projection_lag_events\{projection="domains"\} 0$/m);
    expect(text).toMatch(/^projection_lag_seconds\{projection="aggregate_by_domain"\} 0$/m);
    expect(text).toMatch(/^safe_spf_domains\{status="pending"\} 0$/m);
    expect(text).toMatch(/^process_cpu_seconds_total \d/m);
    projector.child.kill("SIGTERM");
    expect(await projector.exited).toBe(0);
    expect(projector.lines.at(-1)?.msg).toBe("stopped");
  });

  it("refuses a wrong METRICS_PORT before it starts, naming it", async () => {
    const projector = await startProjector({ DATABASE_URL: database.url, METRICS_PORT: "9x" });
    expect(await projector.exited).toBe(1);
    expect(projector.stderr()).toContain('METRICS_PORT: "9x" is not a port from 0 to 65535');
  });
});
