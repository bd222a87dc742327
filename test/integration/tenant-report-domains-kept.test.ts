/**
 * A tenant's report domains are kept per process between requests (tenant-domain-filter.ts), under
 * two tokens the projections replace with every change they cover. Held here: each change seen by
 * the very next call of the same process (a domain added, a new report domain, a new group, a
 * domain removed, a rebuild of the read models beside the live ones), the answer always the one
 * read afresh from the tables, and nothing of `domain` or `report_domain` read while nothing
 * changed (including while reports for known domains arrive).
 */
import { catchUp, rebuildBeside } from "@dmarc-ledger/projection-engine";
import { type TenantReportDomain, tenantReportDomains } from "@dmarc-ledger/report-read-models";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { addDomain, createTenant, removeDomain, setDomainGroup } from "@dmarc-ledger/tenancy";
import {
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  sql,
  type UnknownRow,
} from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateReport, appendAggregateReports } from "../support/aggregate-report.js";
import { backends } from "../support/service-harness.js";

const meta = { causedBy: "test" };

/** Counts the statements that name the tables a tenant's report domains are read from. */
class TableReads implements KyselyPlugin {
  count = 0;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const text = JSON.stringify(args.node);
    if (/"name":"(domain|report_domain)"/.test(text)) this.count++;
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

const byDomain = (list: TenantReportDomain[]) => [...list].sort((a, b) => a.domain.localeCompare(b.domain));

describe.each(backends)("a tenant's report domains kept per process on %s", (_name, makeBackend) => {
  let backend: Awaited<ReturnType<typeof makeBackend>>;
  let runtime: Runtime;
  let tenantId: string;
  let reportIndex = 0;
  const reads = new TableReads();

  const report = async (domain: string) => {
    await appendAggregateReports(runtime.store, [
      aggregateReport({
        identity: `kept-${reportIndex++}`,
        domain,
        organization: "google.com",
        begin: 1_760_000_000,
        end: 1_760_086_399,
        rows: [
          { sourceIp: "192.0.2.1", count: 1, disposition: "none", policyDkim: "pass", policySpf: "pass" },
        ],
      }),
    ]);
    await project();
  };
  const project = () => catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });

  /** The matches read afresh from the tables, by the same suffix rule. */
  const fromTables = async (): Promise<TenantReportDomain[]> => {
    const { rows } = await sql<TenantReportDomain>`select r.domain, d.group_name as group
      from report_domain r join lateral (select d.group_name from domain d
        where d.tenant_id = ${tenantId} and (r.domain = d.domain or r.domain like '%.' || d.domain)
        order by length(d.domain) desc limit 1) d on true`.execute(runtime.db);
    return byDomain(rows);
  };

  /** The kept answer, asked through a handle that counts reads of the two tables. */
  const asked = async () => byDomain(await tenantReportDomains(runtime.db.withPlugin(reads), tenantId));

  beforeAll(async () => {
    backend = await makeBackend();
    runtime = await openRuntime(backend.env);
    tenantId = (await createTenant(runtime.store, { name: "t", region: "global" }, meta)).tenantId;
    const other = (await createTenant(runtime.store, { name: "u", region: "global" }, meta)).tenantId;
    await addDomain(runtime.store, { tenantId, domain: "kept-one.com" }, meta);
    await addDomain(runtime.store, { tenantId: other, domain: "kept-other.org" }, meta);
    await project();
    for (const domain of ["kept-one.com", "mail.kept-one.com", "kept-two.com", "kept-other.org"]) {
      await report(domain);
    }
  });

  afterAll(async () => {
    await runtime?.close();
    await backend?.cleanup();
  });

  it("reads the tables once, then not while nothing they hold changes", async () => {
    const first = await asked();
    expect(first).toEqual(await fromTables());
    expect(first.map((d) => d.domain)).toEqual(["kept-one.com", "mail.kept-one.com"]);
    const readsAfterFirst = reads.count;
    expect(await asked()).toEqual(first);
    // Reports for domains already reported add no report domain.
    await report("kept-one.com");
    await report("kept-other.org");
    expect(await asked()).toEqual(first);
    expect(reads.count).toBe(readsAfterFirst);
    // Callers may sort or change what they get: the kept answer is not theirs.
    const given = await tenantReportDomains(runtime.db, tenantId);
    given.reverse();
    given[0]!.group = "changed by a caller";
    expect(await asked()).toEqual(first);
  });

  it("sees each change at the next call", async () => {
    await addDomain(runtime.store, { tenantId, domain: "kept-two.com" }, meta);
    await project();
    expect((await asked()).map((d) => d.domain)).toEqual([
      "kept-one.com",
      "kept-two.com",
      "mail.kept-one.com",
    ]);

    await report("shop.kept-two.com");
    expect(await asked()).toEqual(await fromTables());
    expect((await asked()).map((d) => d.domain)).toContain("shop.kept-two.com");

    await setDomainGroup(runtime.store, { tenantId, domain: "kept-two.com", group: "Shops" }, meta);
    await project();
    const grouped = await asked();
    expect(grouped).toEqual(await fromTables());
    expect(grouped.filter((d) => d.group === "Shops").map((d) => d.domain)).toEqual([
      "kept-two.com",
      "shop.kept-two.com",
    ]);

    await removeDomain(runtime.store, { tenantId, domain: "kept-one.com" }, meta);
    await project();
    expect((await asked()).map((d) => d.domain)).toEqual(["kept-two.com", "shop.kept-two.com"]);
    expect(await asked()).toEqual(await fromTables());

    // Within one of the tenant's domains, and a domain that is not the tenant's.
    expect(
      (await tenantReportDomains(runtime.db, tenantId, "kept-two.com")).map((d) => d.domain).sort(),
    ).toEqual(["kept-two.com", "shop.kept-two.com"]);
    expect(await tenantReportDomains(runtime.db, tenantId, "shop.kept-two.com")).toEqual([]);
    expect(await tenantReportDomains(runtime.db, tenantId, "kept-one.com")).toEqual([]);
  });

  it("answers from the rebuilt tables after a rebuild beside the live ones", async () => {
    const before = await asked();
    await rebuildBeside({
      store: runtime.store,
      db: runtime.db,
      projections: allProjections,
      concurrentSessions: runtime.database.concurrentSessions,
    });
    const readsBefore = reads.count;
    expect(await asked()).toEqual(before);
    // New tokens came with the rebuilt tables: read again.
    expect(reads.count).toBeGreaterThan(readsBefore);
    await addDomain(runtime.store, { tenantId, domain: "kept-three.net" }, meta);
    await report("kept-three.net");
    expect((await asked()).map((d) => d.domain)).toEqual([
      "kept-three.net",
      "kept-two.com",
      "shop.kept-two.com",
    ]);
    expect(await asked()).toEqual(await fromTables());
  });
});
