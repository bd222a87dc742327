/**
 * Alerts migration 015 on a database the previous version migrated: alert_source_name takes the
 * read model's column names, and the AS organisation of its rows from source_ip_name where that
 * holds the same AS; the rows then name their senders as the API does.
 */
import { type Database, migrateToLatest } from "@dmarc-ledger/db";
import { openTestPglite } from "@dmarc-ledger/db/testing";
import { reportReadModelMigrations } from "@dmarc-ledger/report-read-models/migrations";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { alertsMigrations } from "../src/migrations/index.js";
import type { AlertsSchema } from "../src/schema.js";
import { sendersOf } from "../src/sender-names.js";

const before = {
  name: alertsMigrations.name,
  migrations: Object.fromEntries(
    Object.entries(alertsMigrations.migrations).filter(([name]) => name < "015"),
  ),
};

describe("alerts migration 015: the sources' names as the API keeps them", () => {
  let database: Database;
  // biome-ignore lint/suspicious/noExplicitAny: the tables before and after the migration
  let db: Kysely<any>;

  beforeAll(async () => {
    database = await openTestPglite();
    db = database.db;
    await migrateToLatest(db, reportReadModelMigrations, before);
    // As the previous version kept them: a service, a base domain, two AS-only rows (one of them
    // on another AS in the read model by now), and one with nothing.
    await db
      .insertInto("alert_source_name")
      .values([
        { source_ip: "209.85.220.41", service: "Google", base_domain: "google.com", asn: 15169 },
        { source_ip: "192.0.2.7", service: null, base_domain: "mx.example", asn: null },
        { source_ip: "88.198.24.108", service: null, base_domain: "", asn: 24940 },
        { source_ip: "20.1.1.1", service: null, base_domain: "", asn: 8075 },
        { source_ip: "192.168.1.1", service: null, base_domain: "", asn: null },
      ])
      .execute();
    const named = (source_ip: string, asn: number, asn_organization: string) => ({
      source_ip,
      source_domain: "",
      confirmed: false,
      outcome: "not_asked",
      resolved_at: new Date(),
      asn,
      asn_organization,
      named_seq: 1,
    });
    await db
      .insertInto("source_ip_name")
      .values([
        named("88.198.24.108", 24940, "Hetzner Online GmbH"),
        named("20.1.1.1", 8068, "Microsoft Corporation"),
      ])
      .execute();
    await migrateToLatest(db, reportReadModelMigrations, alertsMigrations);
  });

  afterAll(async () => {
    await database?.close();
  });

  it("renames the columns and takes the organisation where the read model holds the same AS", async () => {
    const rows = await db.selectFrom("alert_source_name").selectAll().orderBy("source_ip").execute();
    // bigint: a string from PostgreSQL, a number from PGlite.
    const asText = rows.map((row) => ({ ...row, asn: row.asn === null ? null : String(row.asn) }));
    expect(asText).toEqual([
      {
        source_ip: "192.0.2.7",
        service_name: null,
        source_domain: "mx.example",
        asn: null,
        asn_organization: null,
      },
      { source_ip: "192.168.1.1", service_name: null, source_domain: "", asn: null, asn_organization: null },
      { source_ip: "20.1.1.1", service_name: null, source_domain: "", asn: "8075", asn_organization: null },
      {
        source_ip: "209.85.220.41",
        service_name: "Google",
        source_domain: "google.com",
        asn: "15169",
        asn_organization: null,
      },
      {
        source_ip: "88.198.24.108",
        service_name: null,
        source_domain: "",
        asn: "24940",
        asn_organization: "Hetzner Online GmbH",
      },
    ]);
  });

  it("names each row's sender as aggregate_by_sender does", async () => {
    const ips = ["209.85.220.41", "192.0.2.7", "88.198.24.108", "20.1.1.1", "192.168.1.1"];
    const names = await (db as Kysely<AlertsSchema>).transaction().execute((trx) => sendersOf(trx, ips));
    expect(Object.fromEntries(names)).toEqual({
      "209.85.220.41": { kind: "service", sender: "Google" },
      "192.0.2.7": { kind: "base_domain", sender: "mx.example" },
      "88.198.24.108": { kind: "asn", sender: "Hetzner Online GmbH" },
      // No organisation known yet (the read model holds another AS): unknown, as the API would
      // say of an address with no organisation, until its next answer names it.
      "20.1.1.1": { kind: "unknown", sender: "unknown" },
      "192.168.1.1": { kind: "unknown", sender: "unknown" },
    });
  });
});
