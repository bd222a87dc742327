import { openDatabase } from "@dmarc-ledger/db";
import { createTestDatabase, openTestPglite } from "@dmarc-ledger/db/testing";
import { openPostgresEventStore } from "../src/index.js";
import { createKurrentDbEventStore } from "../src/kurrentdb/store.js";
import { describeEventStoreContract } from "./contract.js";

describeEventStoreContract("PostgreSQL", async () => {
  const testDatabase = await createTestDatabase("dl_event_store");
  const database = await openDatabase({ kind: "postgres", url: testDatabase.url });
  const store = await openPostgresEventStore(database);
  return {
    store,
    async cleanup() {
      await store.close();
      await database.close();
      await testDatabase.drop();
    },
  };
});

describeEventStoreContract("PGlite", async () => {
  const database = await openTestPglite();
  const store = await openPostgresEventStore(database);
  return {
    store,
    async cleanup() {
      await store.close();
      await database.close();
    },
  };
});

// No KurrentDB server runs here by default; the suite runs against one when given its URL.
const kurrentDbUrl = process.env.EVENTSTORE_URL;
if (!kurrentDbUrl) {
  console.warn(
    "KurrentDB contract suite skipped: EVENTSTORE_URL is not set " +
      "(e.g. EVENTSTORE_URL=kurrentdb://localhost:2113?tls=false)",
  );
}
describeEventStoreContract(
  "KurrentDB",
  async () => {
    const store = createKurrentDbEventStore(kurrentDbUrl!);
    return { store, cleanup: () => store.close() };
  },
  { skip: !kurrentDbUrl },
);
