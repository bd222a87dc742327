/**
 * agg_sender_fact is appended to (migration 021): a key that several batches of
 * aggregate_by_sender write has a row from each, and every reader sums them, so the answers
 * count each message once. Held on PGlite and PostgreSQL: the rows per key, the grouped pages of
 * aggregate_by_sender and policy_impact against the reports' own counts, and a ranking built over
 * the appended rows against the grouping.
 */
import { catchUp } from "@dmarc-ledger/projection-engine";
import {
  aggregateBySenderGrouped,
  aggregateBySenderRanked,
  policyImpactGrouped,
} from "@dmarc-ledger/queries";
import { buildSenderRanking } from "@dmarc-ledger/report-read-models";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { addDomain, createTenant } from "@dmarc-ledger/tenancy";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateReport, appendAggregateReports } from "../support/aggregate-report.js";
import { type Backend, backends } from "../support/service-harness.js";

const meta = { causedBy: "test" };
const DAY = 86_400;
const aprilFirst = Date.UTC(2026, 3, 1) / 1000;
const april = { start: aprilFirst, end: Date.UTC(2026, 4, 1) / 1000 - 1 };
const domain = "appended-senders.com";

/** The same two sources on the same day, as one receiver reports them: counts vary per receiver. */
function report(receiver: number) {
  return aggregateReport({
    identity: `appended-${receiver}`,
    domain,
    organization: `receiver${receiver}.example`,
    begin: aprilFirst + 2 * DAY,
    end: aprilFirst + 3 * DAY - 1,
    rows: [
      {
        sourceIp: "192.0.2.10",
        count: 10 + receiver,
        disposition: "none",
        policyDkim: "pass",
        policySpf: "pass",
      },
      {
        sourceIp: "192.0.2.20",
        count: 3 * receiver,
        disposition: "none",
        policyDkim: "fail",
        policySpf: "fail",
      },
    ],
  });
}

describe.each(backends)("sender facts appended per batch, on %s", (_name, makeBackend) => {
  let backend: Backend;
  let runtime: Runtime;
  let tenantId: string;

  beforeAll(async () => {
    backend = await makeBackend();
    runtime = await openRuntime(backend.env);
    tenantId = (await createTenant(runtime.store, { name: "appended", region: "global" }, meta)).tenantId;
    await addDomain(runtime.store, { tenantId, domain }, meta);
    // Three receivers' reports of the same facts, each projected in a batch of its own.
    for (const receiver of [1, 2, 3]) {
      await appendAggregateReports(runtime.store, [report(receiver)]);
      await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
    }
  });
  afterAll(async () => {
    await runtime?.close();
    await backend?.cleanup();
  });

  it("keeps a row per batch for a key several batches wrote, their sums the reports' counts", async () => {
    const { rows } = await sql<{ source_ip: string; rows: string; volume: string }>`
      select source_ip, count(*)::text as rows, sum(volume)::text as volume
      from agg_sender_fact where domain = ${domain} group by source_ip order by source_ip`.execute(
      runtime.db,
    );
    expect(rows).toEqual([
      { source_ip: "192.0.2.10", rows: "3", volume: String(11 + 12 + 13) },
      { source_ip: "192.0.2.20", rows: "3", volume: String(3 + 6 + 9) },
    ]);
  });

  it("answers aggregate_by_sender and policy_impact with each message counted once", async () => {
    const query = { tenantId, ...april, page: 1, perPage: 100 };
    const senders = await aggregateBySenderGrouped(runtime.db, query);
    expect(senders.records.map((record) => [record.SourceIPs, record.Volume])).toEqual([["2", "54"]]);
    const impact = await policyImpactGrouped(runtime.db, { ...query, policy: "reject" });
    expect(impact.totals.Volume).toBe("54");
    expect(impact.totals.DMARC).toBe("36");
    expect(impact.totals.Stopped).toBe("18");
  });

  it("builds a sender ranking over the appended rows that answers as the grouping does", async () => {
    await buildSenderRanking(runtime.db, { tenantId, kind: "calendar", bucket: april }, 0);
    const query = { tenantId, ...april, page: 1, perPage: 100 };
    expect(await aggregateBySenderRanked(runtime.db, query)).toEqual(
      await aggregateBySenderGrouped(runtime.db, query),
    );
  });
});
