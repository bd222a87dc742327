import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { newEvent, streams } from "@dmarc-ledger/events";
import { catchUp, projectionsReached, resetProjections } from "@dmarc-ledger/projection-engine";
import { aggregateByDomain, aggregateBySource } from "@dmarc-ledger/queries";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { addDomain, createTenant } from "@dmarc-ledger/tenancy";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateReport } from "../support/aggregate-report.js";
import { builtEntry } from "../support/built-processes.js";
import { prng } from "../support/prng.js";
import { type Backend, postgresBackend } from "../support/service-harness.js";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

function generatedReport(index: number, random: () => number) {
  const begin = 1_700_000_000 + (index % 60) * 86_400;
  const rows = Array.from({ length: 400 }, (_, row) => ({
    sourceIp: `198.51.${Math.floor(random() * 100)}.${row % 250}`,
    count: 1 + Math.floor(random() * 20),
    disposition: random() < 0.1 ? "quarantine" : "none",
    policyDkim: random() < 0.7 ? "pass" : "fail",
    policySpf: random() < 0.6 ? "pass" : "fail",
    dkim: [
      { domain: "example.com", selector: "s1", result: random() < 0.75 ? "pass" : "fail", humanResult: null },
    ],
    spf: [{ domain: "example.com", scope: "mfrom", result: random() < 0.65 ? "pass" : "fail" }],
  }));
  return aggregateReport({
    identity: `crash-test-${index}`,
    domain: "example.com",
    organization: `reporter${index % 7}.example`,
    // Every fifth report spans three days, so the day split is part of what must not double.
    begin,
    end: index % 5 === 0 ? begin + 3 * 86_400 - 1 : begin + 86_399,
    rows,
  });
}

describe("a projector killed with SIGKILL mid-import", () => {
  let backend: Backend;
  let runtime: Runtime;
  let tenantId: string;
  const reports = 240;
  let expectedVolume = 0;

  let projectorMain: string[];
  const startProjector = (): ChildProcess =>
    spawn(process.execPath, projectorMain, {
      cwd: repoRoot,
      env: { ...process.env, ...backend.env, LOG_LEVEL: "silent", DNS_NAMESERVERS: "127.0.0.1:9" },
      stdio: "ignore",
    });
  const killed = (child: ChildProcess) =>
    new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.kill("SIGKILL");
    });

  beforeAll(async () => {
    projectorMain = await builtEntry("apps/projector/dist/main.js");
    backend = await postgresBackend();
    runtime = await openRuntime(backend.env);
    tenantId = (await createTenant(runtime.store, { name: "crash", region: "global" }, { causedBy: "test" }))
      .tenantId;
    await addDomain(runtime.store, { tenantId, domain: "example.com" }, { causedBy: "test" });
  });

  afterAll(async () => {
    await runtime?.close();
    await backend?.cleanup();
  });

  it("counts every message exactly once after restarts, like an uninterrupted run", async () => {
    const random = prng(42);
    let projector = startProjector();
    let kills = 0;
    for (let index = 0; index < reports; index++) {
      const report = generatedReport(index, random);
      expectedVolume += report.rows.reduce((sum, row) => sum + row.count, 0);
      await runtime.store.append(
        streams.aggregateReport(report.identity),
        [newEvent("AggregateReportReceived", report, { causedBy: "test" })],
        "no_stream",
      );
      // Kill the projector three times while the import goes on, at moments the random stream picks.
      if (index % 60 === 59) {
        await new Promise((resolve) => setTimeout(resolve, 200 + random() * 800));
        await killed(projector);
        kills++;
        projector = startProjector();
      }
    }
    expect(kills).toBe(4);

    const head = (await runtime.store.headPosition())!;
    const deadline = Date.now() + 120_000;
    while (!(await projectionsReached(runtime.db, allProjections, head))) {
      if (Date.now() > deadline) throw new Error("the restarted projector did not catch up");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await killed(projector);

    const query = { tenantId, start: 0, end: 2_000_000_000, page: 1, perPage: 1000 };
    const interrupted = {
      byDomain: await aggregateByDomain(runtime.db, query),
      bySource: await aggregateBySource(runtime.db, query),
    };
    expect(interrupted.byDomain.records[0]!.Volume).toBe(String(expectedVolume));

    await resetProjections(runtime.db, allProjections);
    await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
    const uninterrupted = {
      byDomain: await aggregateByDomain(runtime.db, query),
      bySource: await aggregateBySource(runtime.db, query),
    };
    expect(interrupted).toEqual(uninterrupted);
  });
});
