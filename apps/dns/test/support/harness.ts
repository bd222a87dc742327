import { type Database, migrateToLatest, openDatabase } from "@dmarc-ledger/db";
import { createTestDatabase, type TestDatabase } from "@dmarc-ledger/db/testing";
import { type EventStore, eventStoreMigrations, openPostgresEventStore } from "@dmarc-ledger/event-store";
import { newEvent, streams } from "@dmarc-ledger/events";
import { pino } from "pino";
import { type RunningDnsServer, startDnsServer } from "../../src/dns-server.js";
import type { DnsSettings } from "../../src/settings.js";

export const zoneName = "spf.ledger.test";
export const reportsDomain = "reports.ledger.test";

export function testSettings(overrides: Partial<DnsSettings> = {}): DnsSettings {
  return {
    host: "127.0.0.1",
    port: 0,
    safeSpfZone: zoneName,
    reportsDomain,
    nameServers: ["ns1.ledger-dns.test", "ns2.ledger-dns.test"],
    soaMailbox: "hostmaster.ledger.test",
    reportsMx: [{ preference: 10, exchange: "mx.ledger.test" }],
    recordTtl: 300,
    negativeTtl: 60,
    maxUdpPayload: 1232,
    tcpMaxConnections: 16,
    tcpMaxConnectionsPerIp: 16,
    tcpIdleTimeoutMs: 2000,
    ...overrides,
  };
}

export interface Harness {
  store: EventStore;
  addDomain(domain: string): Promise<void>;
  publish(domain: string, records: { name: string; value: string }[]): Promise<void>;
  startServer(overrides?: Partial<DnsSettings>): Promise<RunningDnsServer>;
  close(): Promise<void>;
}

/** A fresh PostgreSQL database with the event store, and DNS servers following it. */
export async function openHarness(prefix: string): Promise<Harness> {
  const testDatabase: TestDatabase = await createTestDatabase(prefix);
  const database: Database = await openDatabase({ kind: "postgres", url: testDatabase.url });
  await migrateToLatest(database.db, eventStoreMigrations);
  const store = await openPostgresEventStore(database);
  const servers: RunningDnsServer[] = [];
  const metadata = { causedBy: "test" };
  return {
    store,
    async addDomain(domain) {
      await store.append(
        streams.domain(domain),
        [newEvent("DomainAdded", { domain, tenantId: "t1" }, metadata)],
        "any",
      );
    },
    async publish(domain, records) {
      await store.append(
        streams.domain(domain),
        [
          newEvent(
            "SafeSpfRecordComputed",
            {
              domain,
              tenantId: "t1",
              original: "v=spf1 -all",
              records,
              lookupsBefore: 1,
              lookupsAfter: records.length - 1,
              networks: [],
              added: [],
              removed: [],
              warnings: [],
              minTtl: null,
            },
            metadata,
          ),
        ],
        "any",
      );
    },
    async startServer(overrides = {}) {
      const server = await startDnsServer({
        store,
        settings: testSettings(overrides),
        logger: pino({ level: "silent" }),
      });
      servers.push(server);
      return server;
    },
    async close() {
      for (const server of servers) await server.stop();
      await store.close();
      await database.close();
      await testDatabase.drop();
    },
  };
}

/** A root and chained records like publish.ts lays them out: each leads on by redirect=. */
export function chainedSet(
  domain: string,
  version: string,
  termsPerRecord: string[][],
): { name: string; value: string }[] {
  const root = `${domain}.${zoneName}`;
  const nameOf = (index: number) => (index === 0 ? root : `_spf${index}-${version}.${root}`);
  return termsPerRecord.map((terms, index) => ({
    name: nameOf(index),
    value:
      index < termsPerRecord.length - 1
        ? `v=spf1 ${terms.join(" ")} redirect=${nameOf(index + 1)}`
        : `v=spf1 ${terms.join(" ")} -all`,
  }));
}

export async function waitFor(
  condition: () => Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
