import { openTestPglite } from "@dmarc-ledger/db/testing";
import { describe, expect, it } from "vitest";
import { openImapProgressStore } from "../src/imap/index.js";

// The intake tests use the progress table on PostgreSQL; this checks the same SQL on PGlite,
// the embedded default.
describe("IMAP progress on embedded PGlite", () => {
  it("keeps each folder's UIDVALIDITY and last UID, updated in place", async () => {
    const database = await openTestPglite();
    try {
      const store = await openImapProgressStore(database);
      expect(await store.load("u@h:143/INBOX")).toBeNull();
      await store.save("u@h:143/INBOX", { uidValidity: 4_294_967_295n, lastUid: 7 });
      await store.save("u@h:143/INBOX", { uidValidity: 4_294_967_295n, lastUid: 9 });
      await store.save("u@h:143/Other", { uidValidity: 1n, lastUid: 1 });
      // Opening again finds the table migrated and the rows in place.
      const again = await openImapProgressStore(database);
      expect(await again.load("u@h:143/INBOX")).toEqual({ uidValidity: 4_294_967_295n, lastUid: 9 });
      expect(await again.load("u@h:143/Other")).toEqual({ uidValidity: 1n, lastUid: 1 });
    } finally {
      await database.close();
    }
  });
});
