import { streams } from "@dmarc-ledger/events";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Backend, backends } from "../../../test/support/service-harness.js";
import { startRetentionJob } from "../src/retention-job.js";

describe.each(backends)("the retention job on %s", (_name, makeBackend) => {
  let backend: Backend;
  let runtime: Runtime;
  const logger = pino({ level: "silent" });

  beforeAll(async () => {
    backend = await makeBackend();
    runtime = await openRuntime(backend.env);
  });
  afterAll(async () => {
    await runtime?.close();
    await backend?.cleanup();
  });

  const runs = async () => (await runtime.store.readStream(streams.retentionRuns())).length;

  it("runs once per interval however many processes run it at once, and records each run", async () => {
    // Intervals of an hour: the timers never fire here. Whether the three asks overlap or come
    // one after another (a loaded machine), one run is due in the hour, and only one runs: the
    // others find the lease held or the last run too recent.
    const jobs = [1, 2, 3].map(() => startRetentionJob({ ...runtime, logger, intervalMs: 3_600_000 }));
    try {
      const ran = await Promise.all(jobs.map((job) => job.runIfDue()));
      expect(ran.filter(Boolean)).toHaveLength(1);
      expect(await runs()).toBe(1);
    } finally {
      for (const job of jobs) await job.stop();
    }
  });

  it("runs by itself once per interval", async () => {
    const before = await runs();
    const job = startRetentionJob({ ...runtime, logger, intervalMs: 1000 });
    try {
      const deadline = Date.now() + 60_000;
      while ((await runs()) === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(await runs()).toBeGreaterThan(before);
    } finally {
      await job.stop();
    }
  });
});
