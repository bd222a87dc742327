/**
 * The tls_facts projection on PGlite: the same events in any batching give the same rows, a
 * report over 24 hours is spread over its days, and retention's AggregateFactsExpired drops the
 * facts of its domains before its cutoff.
 */
import { type AnySchema, migrateToLatest } from "@dmarc-ledger/db";
import { openTestPglite } from "@dmarc-ledger/db/testing";
import type { DomainEvent, TlsReportReceived } from "@dmarc-ledger/events";
import { tenancyMigrations } from "@dmarc-ledger/tenancy";
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reportReadModelMigrations } from "../src/migrations/index.js";
import { tlsFactsProjection } from "../src/projections/index.js";
import type { ReportSchema } from "../src/schema.js";

const at = (text: string) => Date.parse(text) / 1000;
let position = 0n;
const event = <T extends DomainEvent["type"]>(type: T, data: unknown): DomainEvent =>
  ({
    type,
    data,
    stream: `test-${position}`,
    revision: 0n,
    position: ++position,
    metadata: { causedBy: "test" },
    recordedAt: new Date(),
  }) as DomainEvent;

const report = (
  id: string,
  domain: string,
  begin: string,
  end: string,
  failed: number,
): TlsReportReceived => ({
  identity: id,
  organization: "Google Inc.",
  contactInfo: null,
  reportId: id,
  begin: at(begin),
  end: at(end),
  policies: [
    {
      policyType: "sts",
      policyDomain: domain,
      policyStrings: [],
      mxHosts: [],
      successfulSessions: 100,
      failedSessions: failed,
      failures: [
        {
          resultType: "certificate-expired",
          sendingMtaIp: null,
          receivingMxHostname: `mx.${domain}`,
          receivingMxHelo: null,
          receivingIp: null,
          failedSessions: failed,
          additionalInformation: null,
          failureReasonCode: null,
        },
      ],
    },
  ],
  source: "test",
  warnings: [],
});

const events = [
  event("TlsReportReceived", report("a", "example.com", "2016-04-01T00:00:00Z", "2016-04-01T23:59:59Z", 3)),
  event("TlsReportReceived", report("b", "example.com", "2016-04-02T12:00:00Z", "2016-04-04T12:00:00Z", 5)),
  event("TlsReportReceived", report("c", "example.org", "2016-04-02T00:00:00Z", "2016-04-02T23:59:59Z", 7)),
];

describe("the tls_facts projection", () => {
  let database: Awaited<ReturnType<typeof openTestPglite>>;
  let db: Kysely<ReportSchema>;
  beforeAll(async () => {
    database = await openTestPglite();
    await migrateToLatest(database.db, tenancyMigrations, reportReadModelMigrations);
    db = database.withSchema<AnySchema>() as unknown as Kysely<ReportSchema>;
  });
  afterAll(async () => {
    await database?.close();
  });

  const apply = (batch: DomainEvent[]) =>
    db.transaction().execute((trx) => tlsFactsProjection.apply(trx, batch));
  const rows = async () => ({
    policies: (
      await sql<Record<string, string>>`select domain, policy_type, t::text, reports::text, successful::text,
        failed::text from tls_policy_fact order by domain, t`.execute(db)
    ).rows,
    failures: (
      await sql<Record<string, string>>`select domain, receiving_mx_hostname, t::text, failed::text
        from tls_failure_fact order by domain, t`.execute(db)
    ).rows,
  });
  const clear = async () => {
    await sql`delete from tls_policy_fact`.execute(db);
    await sql`delete from tls_failure_fact`.execute(db);
  };

  it("gives the same rows whether the events come one by one or together", async () => {
    for (const one of events) await apply([one]);
    const oneByOne = await rows();
    await clear();
    await apply(events);
    expect(await rows()).toEqual(oneByOne);
    // Report b: 48 hours from noon, 100 sessions as 25, 50, 25; 5 failed as 1, 3, 1 (ties to the earlier day).
    expect(
      oneByOne.policies
        .filter((row) => row.domain === "example.com" && Number(row.t) >= at("2016-04-02T00:00:00Z"))
        .map((row) => [row.t, row.reports, row.successful, row.failed]),
    ).toEqual([
      [String(at("2016-04-02T12:00:00Z")), "1", "25", "1"],
      [String(at("2016-04-03T00:00:00Z")), "0", "50", "3"],
      [String(at("2016-04-04T00:00:00Z")), "0", "25", "1"],
    ]);
  });

  it("drops the facts of the expired domains before the cutoff, and only those", async () => {
    await apply([
      event("AggregateFactsExpired", {
        tenantId: "t",
        before: "2016-04-03",
        domains: ["example.com"],
        removed: { messages: 0, rows: {} },
      }),
    ]);
    const left = await rows();
    expect(left.policies.map((row) => [row.domain, row.t])).toEqual([
      ["example.com", String(at("2016-04-03T00:00:00Z"))],
      ["example.com", String(at("2016-04-04T00:00:00Z"))],
      ["example.org", String(at("2016-04-02T00:00:00Z"))],
    ]);
    expect(left.failures.map((row) => [row.domain, row.t])).toEqual([
      ["example.com", String(at("2016-04-03T00:00:00Z"))],
      ["example.com", String(at("2016-04-04T00:00:00Z"))],
      ["example.org", String(at("2016-04-02T00:00:00Z"))],
    ]);
  });
});
