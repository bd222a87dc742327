/**
 * aggregate_by_sender writes a batch's deltas (agg_sender_delta) only for the (report domain,
 * day)s a sender ranking covers, or all of them while a build is under way; a build waits for
 * the fact batch in flight before its snapshot. Held to the ranked answers matching the grouping
 * after new facts, on PGlite and PostgreSQL; the concurrency on PostgreSQL.
 */
import { catchUp } from "@dmarc-ledger/projection-engine";
import { aggregateBySenderGrouped, aggregateBySenderRanked } from "@dmarc-ledger/queries";
import {
  asAnnouncedSenderBuild,
  buildSenderRanking,
  recordSenderFactChanges,
  senderChangeMarks,
} from "@dmarc-ledger/report-read-models";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { addDomain, createTenant } from "@dmarc-ledger/tenancy";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateReport, appendAggregateReports } from "../support/aggregate-report.js";
import { type Backend, backends, postgresBackend } from "../support/service-harness.js";

const meta = { causedBy: "test" };
const DAY = 86_400;
const marchFirst = Date.UTC(2026, 2, 1) / 1000;
const march = { start: marchFirst, end: Date.UTC(2026, 3, 1) / 1000 - 1 };
let reports = 0;

/** A one-day report of `domain` on day `day` of March (0: the first), three sources. */
function report(domain: string, day: number) {
  const begin = marchFirst + day * DAY;
  const n = reports++;
  return aggregateReport({
    identity: `coverage-${n}`,
    domain,
    organization: "receiver.example",
    begin,
    end: begin + DAY - 1,
    rows: [0, 1, 2].map((i) => ({
      sourceIp: `198.51.100.${(n * 3 + i) % 250}`,
      count: 1 + ((n + i) % 5),
      disposition: i === 2 ? "reject" : "none",
      policyDkim: i === 2 ? "fail" : "pass",
      policySpf: "fail",
    })),
  });
}

/** The deltas per (domain, day of March). */
async function deltas(runtime: Runtime): Promise<Record<string, number>> {
  const { rows } = await sql<{
    domain: string;
    day: number;
    n: string;
  }>`select domain, day, count(*)::text as n
    from agg_sender_delta group by domain, day order by domain, day`.execute(runtime.db);
  return Object.fromEntries(
    rows.map((row) => [`${row.domain} ${row.day - marchFirst / DAY}`, Number(row.n)]),
  );
}

async function setUp(backend: Backend) {
  const runtime = await openRuntime(backend.env);
  const tenantId = (await createTenant(runtime.store, { name: "ranked", region: "global" }, meta)).tenantId;
  const other = (await createTenant(runtime.store, { name: "grouped", region: "global" }, meta)).tenantId;
  await addDomain(runtime.store, { tenantId, domain: "ranked-senders.com" }, meta);
  await addDomain(runtime.store, { tenantId: other, domain: "grouped-senders.com" }, meta);
  const project = () => catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
  const add = async (...payloads: ReturnType<typeof report>[]) => {
    await appendAggregateReports(runtime.store, payloads);
    await project();
  };
  return { runtime, tenantId, add };
}

describe.each(backends)(
  "sender fact deltas only where a ranking may need them, on %s",
  (_name, makeBackend) => {
    let backend: Backend;
    let runtime: Runtime;
    let tenantId: string;
    let add: (...payloads: ReturnType<typeof report>[]) => Promise<void>;

    beforeAll(async () => {
      backend = await makeBackend();
      ({ runtime, tenantId, add } = await setUp(backend));
    });
    afterAll(async () => {
      await runtime?.close();
      await backend?.cleanup();
    });

    it("writes none without rankings, then those of the days a ranking covers, and the ranking answers as grouped", async () => {
      await add(report("ranked-senders.com", 3), report("grouped-senders.com", 3));
      expect(await deltas(runtime)).toEqual({});
      // A ranking of March 2 to 10 for the tenant of ranked-senders.com.
      await buildSenderRanking(
        runtime.db,
        { tenantId, kind: "calendar", bucket: { start: marchFirst + DAY, end: marchFirst + 10 * DAY - 1 } },
        0,
      );
      expect(await deltas(runtime)).toEqual({});
      await add(
        report("ranked-senders.com", 4),
        report("ranked-senders.com", 4),
        report("ranked-senders.com", 9),
        report("ranked-senders.com", 10),
        report("ranked-senders.com", 0),
        report("grouped-senders.com", 4),
      );
      // The ranking's domain on its days; not before or after them, nor another tenant's domain.
      expect(await deltas(runtime)).toEqual({ "ranked-senders.com 4": 6, "ranked-senders.com 9": 3 });
      const query = {
        tenantId,
        start: marchFirst + DAY,
        end: marchFirst + 10 * DAY - 1,
        page: 1,
        perPage: 100,
      };
      const grouped = await aggregateBySenderGrouped(runtime.db, query);
      expect(grouped.records.length).toBeGreaterThan(0);
      expect(await aggregateBySenderRanked(runtime.db, query)).toEqual(grouped);
      expect(await aggregateBySenderGrouped(runtime.db, { ...query, ...march })).not.toEqual(grouped);
    });
  },
);

describe("sender fact deltas beside a ranking's build, on PostgreSQL", () => {
  let backend: Backend;
  let runtime: Runtime;
  let tenantId: string;
  let add: (...payloads: ReturnType<typeof report>[]) => Promise<void>;

  beforeAll(async () => {
    backend = await postgresBackend();
    ({ runtime, tenantId, add } = await setUp(backend));
    await add(report("ranked-senders.com", 1));
  });
  afterAll(async () => {
    await runtime?.close();
    await backend?.cleanup();
  });

  it("writes every delta while a build is under way", async () => {
    await asAnnouncedSenderBuild(runtime.db, () =>
      add(report("grouped-senders.com", 20), report("ranked-senders.com", 21)),
    );
    expect(await deltas(runtime)).toEqual({ "grouped-senders.com 20": 3, "ranked-senders.com 21": 3 });
    await sql`delete from agg_sender_delta`.execute(runtime.db);
    await add(report("grouped-senders.com", 20));
    expect(await deltas(runtime)).toEqual({});
  });

  it("starts a build's snapshot after the fact batch that took its number before the build was announced", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let numbered!: () => void;
    const hasNumber = new Promise<void>((resolve) => {
      numbered = resolve;
    });
    // A fact batch between its number and its commit, as aggregate_by_sender's is.
    const batch = runtime.db.transaction().execute(async (trx) => {
      const seq = await recordSenderFactChanges(trx, [
        { domain: "ranked-senders.com", t: marchFirst + 25 * DAY },
      ]);
      numbered();
      await held;
      return seq;
    });
    await hasNumber;
    let buildDone = false;
    const build = buildSenderRanking(runtime.db, { tenantId, kind: "calendar", bucket: march }, 0).then(
      () => {
        buildDone = true;
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(buildDone).toBe(false);
    release();
    const seq = await batch;
    await build;
    const { rows } = await sql<{ built_seq: string }>`select built_seq::text from sender_ranking_build
      where tenant_id = ${tenantId} and bucket_start = ${march.start}`.execute(runtime.db);
    // The build counted the batch: nothing of it is left for deltas to add.
    expect(rows.map((row) => row.built_seq)).toEqual([seq]);
    expect((await senderChangeMarks(runtime.db)).factSeq).toBe(seq);
  });
});
