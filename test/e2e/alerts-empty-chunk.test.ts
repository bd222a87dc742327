/**
 * A report's last chunk can hold no rows (the rows before it filled the chunk before, and the
 * report ended): the alerts' evaluator takes it and goes on. It used to fail on it for good
 * (an insert of no rows), which held every later alert of the deployment behind it.
 */
import { alertEvaluator } from "@dmarc-ledger/alerts";
import { newEvent, streams } from "@dmarc-ledger/events";
import { catchUp } from "@dmarc-ledger/projection-engine";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import { addDomain, createTenant } from "@dmarc-ledger/tenancy";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateReport } from "../support/aggregate-report.js";
import { type Backend, backends } from "../support/service-harness.js";

const meta = { causedBy: "test" };
const begin = Date.UTC(2024, 2, 31) / 1000;

describe.each(backends)("the alerts' evaluator and a report's empty last chunk on %s", (_name, open) => {
  let backend: Backend;
  let runtime: Runtime;

  beforeAll(async () => {
    backend = await open();
    runtime = await openRuntime(backend.env);
    const { tenantId } = await createTenant(runtime.store, { name: "acme", region: "global" }, meta);
    await addDomain(runtime.store, { tenantId, domain: "example.com" }, meta);
  });

  afterAll(async () => {
    await runtime?.close();
    await backend?.cleanup();
  });

  it("counts the chunk with rows, passes the empty one, and reaches the store's head", async () => {
    const report = aggregateReport({
      identity: "google.com!example.com!chunked",
      domain: "example.com",
      organization: "google.com",
      begin,
      end: begin + 86_399,
      // Google's mail servers, as the corpus's reports show them.
      rows: [
        { sourceIp: "209.85.220.41", count: 7, disposition: "none", policyDkim: "pass", policySpf: "pass" },
        { sourceIp: "209.85.220.69", count: 2, disposition: "none", policyDkim: "fail", policySpf: "fail" },
      ],
    });
    await runtime.store.append(
      streams.aggregateReport(report.identity),
      [
        newEvent("AggregateReportReceived", { ...report, chunk: { index: 0, last: false } }, meta),
        newEvent("AggregateReportReceived", { ...report, rows: [], chunk: { index: 1, last: true } }, meta),
      ],
      "no_stream",
    );
    await catchUp({
      store: runtime.store,
      db: runtime.db,
      projections: [alertEvaluator({ maxEventAgeMs: 3_600_000 })],
    });
    const { rows: checkpoint } = await sql<{ position: string }>`select position::text as position
      from projection_checkpoint where projection = 'alert_evaluator'`.execute(runtime.db);
    expect(BigInt(checkpoint[0]!.position)).toBe(await runtime.store.headPosition());
    const { rows: days } = await sql<{ day: string; messages: string; failed: string }>`
      select day, messages::text as messages, failed::text as failed from alert_domain_day
      where domain = 'example.com'`.execute(runtime.db);
    expect(days).toEqual([{ day: "2024-03-31", messages: "9", failed: "2" }]);
  });
});
