/**
 * Which report domains count for a tenant: its domains and their subdomains that reports named,
 * each under the most specific of the tenant's domains above it (whose group it takes).
 */
import { type AnySchema, migrateToLatest } from "@dmarc-ledger/db";
import { openTestPglite } from "@dmarc-ledger/db/testing";
import { tenancyMigrations } from "@dmarc-ledger/tenancy";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportReadModelMigrations } from "../src/migrations/index.js";
import { tenantReportDomains } from "../src/tenant-domain-filter.js";

describe("tenantReportDomains", () => {
  let database: Awaited<ReturnType<typeof openTestPglite>>;
  let db: Kysely<AnySchema>;
  beforeAll(async () => {
    database = await openTestPglite();
    await migrateToLatest(database.db, tenancyMigrations, reportReadModelMigrations);
    db = database.withSchema<AnySchema>();
    const added = new Date();
    await db
      .insertInto("domain")
      .values([
        { domain: "example.com", tenant_id: "a", group_name: "Brands", added_at: added },
        { domain: "mail.example.com", tenant_id: "a", group_name: null, added_at: added },
        { domain: "other.org", tenant_id: "b", group_name: null, added_at: added },
      ])
      .execute();
    const reported = ["example.com", "x.mail.example.com", "shop.example.com", "notexample.com", "other.org"];
    await db
      .insertInto("report_domain")
      .values(reported.map((domain) => ({ domain })))
      .execute();
  });
  afterAll(async () => database?.close());

  it("matches by suffix, the longest of the tenant's domains owning each", async () => {
    const matches = await tenantReportDomains(db, "a");
    expect(matches.sort((x, y) => x.domain.localeCompare(y.domain))).toEqual([
      { domain: "example.com", group: "Brands" },
      { domain: "shop.example.com", group: "Brands" },
      { domain: "x.mail.example.com", group: null },
    ]);
    expect(await tenantReportDomains(db, "b")).toEqual([{ domain: "other.org", group: null }]);
    expect(await tenantReportDomains(db, "nobody")).toEqual([]);
  });
});
