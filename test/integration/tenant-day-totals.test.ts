/**
 * GET aggregate_by_date over all of a tenant's domains reads the tenant's day totals, with the
 * days written since their upkeep summed afresh. Held here to the sum over agg_domain_day (which
 * the API tests hold to report files) and to the volumes of the reports this file makes: before
 * the first upkeep, after it, after new facts (caught up and not), after the tenant gains a
 * domain, after a replay; by day, week and month.
 */
import { newEvent, streams } from "@dmarc-ledger/events";
import { catchUp, rebuildBeside } from "@dmarc-ledger/projection-engine";
import { aggregateByDate, bucketRange, type DateSeriesQuery } from "@dmarc-ledger/queries";
import {
  maintainTenantDayTotals,
  tenantDayRows,
  tenantReportDomains,
} from "@dmarc-ledger/report-read-models";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { addDomain, createTenant } from "@dmarc-ledger/tenancy";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateReport, appendAggregateReports } from "../support/aggregate-report.js";
import { prng } from "../support/prng.js";
import { type Backend, postgresBackend } from "../support/service-harness.js";

const meta = { causedBy: "test" };
const DAY = 86_400;
const firstDay = Date.UTC(2025, 9, 1) / 1000 / DAY;
const days = 92;

const random = prng(5);

describe("the daily series from the tenant's day totals", () => {
  let backend: Backend;
  let runtime: Runtime;
  let tenantId: string;
  const owned = ["t-one.com", "t-two.com"];
  /** Messages sent per (report domain, day), as this file made them. */
  const sent: { domain: string; day: number; count: number }[] = [];
  let index = 0;

  const importReports = async (domains: string[], count: number, span: [number, number]) => {
    const payloads = Array.from({ length: count }, () => {
      const domain = domains[Math.floor(random() * domains.length)]!;
      const day = span[0] + Math.floor(random() * (span[1] - span[0] + 1));
      const rows = Array.from({ length: 1 + Math.floor(random() * 4) }, () => {
        const count = 1 + Math.floor(random() * 100);
        sent.push({ domain, day, count });
        return {
          sourceIp: `192.0.2.${Math.floor(random() * 50)}`,
          count,
          disposition: "none",
          policyDkim: "pass",
          policySpf: "fail",
        };
      });
      return aggregateReport({
        identity: `days-${index++}`,
        domain,
        organization: "google.com",
        begin: day * DAY,
        end: day * DAY + DAY - 1,
        rows,
      });
    });
    await appendAggregateReports(runtime.store, payloads);
    await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
  };

  const queries = (): DateSeriesQuery[] =>
    (["day", "week", "month"] as const).flatMap((bucket) => [
      { tenantId, bucket, start: firstDay * DAY, end: (firstDay + days) * DAY - 1, page: 1, perPage: 1000 },
      {
        tenantId,
        bucket,
        start: (firstDay + 10) * DAY + 500,
        end: (firstDay + 40) * DAY,
        page: 1,
        perPage: 1000,
      },
    ]);

  /** Whether the tenant's totals answer (they count its domains), and every series as summed. */
  const expectSameAsSummed = async (): Promise<boolean> => {
    for (const query of queries()) {
      const range = bucketRange(query.start, query.end, query.bucket);
      const summed = await aggregateByDate(runtime.db, query, range, { ignoreDayTotals: true });
      expect(await aggregateByDate(runtime.db, query, range), `${query.bucket} ${query.start}`).toEqual(
        summed,
      );
    }
    const domains = (await tenantReportDomains(runtime.db, tenantId)).map((d) => d.domain);
    // The period has reports: the totals give rows exactly when they count the tenant's domains.
    const kept = await tenantDayRows(runtime.db, tenantId, domains, firstDay, firstDay + days);
    return kept !== null && (await sql`${kept}`.execute(runtime.db)).rows.length > 0;
  };

  /** Each day's Volume against the reports sent to the tenant's domains and their subdomains. */
  const expectSentVolumes = async () => {
    const expected = new Map<string, number>();
    for (const row of sent) {
      if (!owned.some((d) => row.domain === d || row.domain.endsWith(`.${d}`))) continue;
      const date = new Date(row.day * DAY * 1000).toISOString().slice(0, 10);
      expected.set(date, (expected.get(date) ?? 0) + row.count);
    }
    const query = queries()[0]!;
    const series = await aggregateByDate(runtime.db, query);
    expect(
      Object.fromEntries(
        series.records.filter((r) => r.Volume !== "0").map((r) => [r.Date, Number(r.Volume)]),
      ),
    ).toEqual(Object.fromEntries(expected));
  };

  beforeAll(async () => {
    backend = await postgresBackend();
    runtime = await openRuntime(backend.env);
    tenantId = (await createTenant(runtime.store, { name: "t", region: "global" }, meta)).tenantId;
    const other = (await createTenant(runtime.store, { name: "u", region: "global" }, meta)).tenantId;
    await addDomain(runtime.store, { tenantId, domain: "t-one.com" }, meta);
    await addDomain(runtime.store, { tenantId, domain: "t-two.com" }, meta);
    await addDomain(runtime.store, { tenantId: other, domain: "u-other.com" }, meta);
    await importReports(["t-one.com", "t-two.com", "mail.t-two.com", "u-other.com", "t-later.com"], 150, [
      firstDay,
      firstDay + days - 1,
    ]);
  });

  afterAll(async () => {
    await runtime?.close();
    await backend?.cleanup();
  });

  it("sums agg_domain_day until the first upkeep, then reads the totals", async () => {
    expect(await expectSameAsSummed()).toBe(false);
    const kept = await maintainTenantDayTotals(runtime.db);
    expect(kept.find((k) => k.tenantId === tenantId)).toMatchObject({ outcome: "built" });
    expect(await expectSameAsSummed()).toBe(true);
    await expectSentVolumes();
    expect(await maintainTenantDayTotals(runtime.db)).toEqual([]);
  });

  it("new facts: their days summed afresh per request, then caught up", async () => {
    await importReports(["t-one.com", "mail.t-two.com"], 8, [firstDay + 20, firstDay + 25]);
    expect(await expectSameAsSummed()).toBe(true);
    await expectSentVolumes();
    const kept = await maintainTenantDayTotals(runtime.db);
    const mine = kept.find((k) => k.tenantId === tenantId);
    expect(mine?.outcome).toBe("caught_up");
    expect(mine?.days).toBeLessThanOrEqual(6);
    expect(await expectSameAsSummed()).toBe(true);
    await expectSentVolumes();
  });

  it("a domain added later claims its reports: summed until built again", async () => {
    await addDomain(runtime.store, { tenantId, domain: "t-later.com" }, meta);
    await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
    owned.push("t-later.com");
    expect(await expectSameAsSummed()).toBe(false);
    await expectSentVolumes();
    expect((await maintainTenantDayTotals(runtime.db)).find((k) => k.tenantId === tenantId)?.outcome).toBe(
      "built",
    );
    expect(await expectSameAsSummed()).toBe(true);
    await expectSentVolumes();
  });

  it("an expiry of the tenant's old facts: summed until built again", async () => {
    const domains = (await tenantReportDomains(runtime.db, tenantId)).map((d) => d.domain);
    await runtime.store.append(
      streams.personalData(tenantId),
      [
        newEvent(
          "AggregateFactsExpired",
          { tenantId, before: "2025-10-20", domains, removed: { messages: 0, rows: {} } },
          meta,
        ),
      ],
      "any",
    );
    await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
    const cutoff = Date.UTC(2025, 9, 20) / 1000 / DAY;
    for (let i = sent.length - 1; i >= 0; i--)
      if (sent[i]!.day < cutoff && domains.includes(sent[i]!.domain)) sent.splice(i, 1);
    expect(await expectSameAsSummed()).toBe(false);
    await expectSentVolumes();
    expect((await maintainTenantDayTotals(runtime.db)).find((k) => k.tenantId === tenantId)?.outcome).toBe(
      "built",
    );
    expect(await expectSameAsSummed()).toBe(true);
    await expectSentVolumes();
  });

  it("a replay gives the same series", async () => {
    const before = await Promise.all(queries().map((query) => aggregateByDate(runtime.db, query)));
    await rebuildBeside({
      store: runtime.store,
      db: runtime.db,
      projections: allProjections,
      concurrentSessions: runtime.database.concurrentSessions,
    });
    expect(await Promise.all(queries().map((query) => aggregateByDate(runtime.db, query)))).toEqual(before);
    await maintainTenantDayTotals(runtime.db);
    expect(await expectSameAsSummed()).toBe(true);
    expect(await Promise.all(queries().map((query) => aggregateByDate(runtime.db, query)))).toEqual(before);
  });
});
