import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "@dmarc-ledger/config";
import { type Database, migrateToLatest, openDatabase } from "@dmarc-ledger/db";
import { createTestDatabase, openTestPglite } from "@dmarc-ledger/db/testing";
import type { Personal } from "@dmarc-ledger/events";
import { tenancyMigrations } from "@dmarc-ledger/tenancy/migrations";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DataKeys,
  masterKeyFile,
  masterKeysFrom,
  noTenant,
  openDataKeys,
  personalDataMigrations,
  shredDataKeys,
} from "../src/index.js";

const backends: [string, () => Promise<{ database: Database; drop: () => Promise<void> }>][] = [
  ["PGlite", async () => ({ database: await openTestPglite(), drop: async () => {} })],
  [
    "PostgreSQL",
    async () => {
      const test = await createTestDatabase("dl_personal");
      return { database: await openDatabase({ kind: "postgres", url: test.url }), drop: test.drop };
    },
  ],
];

const key = () => randomBytes(32);
const b64 = (bytes: Buffer) => bytes.toString("base64");

describe.each(backends)("data keys on %s", (_name, open) => {
  let database: Database;
  let drop: () => Promise<void>;
  const first = key();

  beforeAll(async () => {
    ({ database, drop } = await open());
    await migrateToLatest(database.db, tenancyMigrations, personalDataMigrations);
    await sql`insert into domain (domain, tenant_id, group_name, added_at)
      values ('acme.example', 't-acme', null, now())`.execute(database.db);
  });
  afterAll(async () => {
    await database?.close();
    await drop?.();
  });

  const sealed = (data: { sealed: unknown }) => data as Personal<{ subject: string }>;

  it("seals with the key of the domain's tenant and month, and opens it again; nothing of it in clear", async () => {
    const keys = new DataKeys({ current: first, previous: null });
    const db = database.db;
    const tenant = await keys.tenantOf(db, "Mail.ACME.example");
    expect(tenant).toBe("t-acme");
    expect(await keys.tenantOf(db, "Other.example.")).toBe("domain:other.example");
    expect(noTenant).toBe("-");
    const at = new Date("2026-03-10T12:00:00Z");
    const value = { subject: "marker-subject-7f3a" };
    const one = await keys.seal(db, tenant, at, value);
    const two = await keys.seal(db, tenant, new Date("2026-03-31T23:59:59Z"), value);
    const april = await keys.seal(db, tenant, new Date("2026-04-01T00:00:00Z"), value);
    expect(one.keyId).toBe(two.keyId);
    expect(april.keyId).not.toBe(one.keyId);
    expect(one.tenantId).toBe("t-acme");
    expect(one.data).not.toContain("marker");
    expect(Buffer.from(one.data, "base64").toString("latin1")).not.toContain("marker");
    // A fresh nonce each time: the same value sealed twice differs.
    expect(one.data).not.toBe(two.data);
    const opened = await keys.open(db, [
      sealed({ sealed: one }),
      sealed({ sealed: april }),
      { clear: value },
    ]);
    expect(opened).toEqual([value, value, value]);
    const months = await sql<{
      month: string;
    }>`select month from data_key where tenant_id = 't-acme' order by month`.execute(db);
    expect(months.rows.map((r) => r.month)).toEqual(["2026-03", "2026-04"]);
  });

  it("a shredded key opens as null, for good, in this and every other process; the others still open", async () => {
    const keys = new DataKeys({ current: first, previous: null });
    const other = new DataKeys({ current: first, previous: null });
    const db = database.db;
    const march = await keys.seal(db, "t-acme", new Date("2026-03-02T00:00:00Z"), { subject: "march" });
    const may = await keys.seal(db, "t-acme", new Date("2026-05-02T00:00:00Z"), { subject: "may" });
    // Both processes have the keys unwrapped and cached now.
    expect(await other.open(db, [sealed({ sealed: march }), sealed({ sealed: may })])).toEqual([
      { subject: "march" },
      { subject: "may" },
    ]);
    const shredded = await shredDataKeys(db, "t-acme", "2026-05");
    expect(shredded.map((k) => k.month)).toEqual(["2026-03", "2026-04"]);
    for (const reader of [keys, other]) {
      expect(await reader.open(db, [sealed({ sealed: march }), sealed({ sealed: may })])).toEqual([
        null,
        { subject: "may" },
      ]);
    }
    // A seal after the shred makes a new key for the month: the old data stays unreadable.
    const again = await keys.seal(db, "t-acme", new Date("2026-03-20T00:00:00Z"), { subject: "late" });
    expect(again.keyId).not.toBe(march.keyId);
    expect(await keys.open(db, [sealed({ sealed: march }), sealed({ sealed: again })])).toEqual([
      null,
      { subject: "late" },
    ]);
  });

  it("a master key rotation rewraps every data key and keeps every unshredded field readable", async () => {
    const db = database.db;
    const before = new DataKeys({ current: first, previous: null });
    const values = ["2026-06", "2026-07", "2026-08"].map((month, i) => ({ month, subject: `rotated-${i}` }));
    const envelopes: Personal<{ month: string; subject: string }>[] = [];
    for (const value of values) {
      envelopes.push({
        sealed: await before.seal(db, "t-rot", new Date(`${value.month}-15T00:00:00Z`), value),
      });
    }
    await shredDataKeys(db, "t-rot", "2026-07");
    const second = key();
    const rotating = await openDataKeys(
      db,
      { MASTER_KEY: b64(second), MASTER_KEY_PREVIOUS: b64(first) },
      null,
    );
    // Readable during the rotation, with the old key as MASTER_KEY_PREVIOUS.
    expect(await rotating.open(db, envelopes)).toEqual([null, values[1], values[2]]);
    const rewrapped = await rotating.rewrapAll(db);
    expect(rewrapped).toBeGreaterThanOrEqual(2);
    // After it, the new key alone opens them all; the old one alone is refused at start.
    const after = await openDataKeys(db, { MASTER_KEY: b64(second) }, null);
    expect(await after.open(db, envelopes)).toEqual([null, values[1], values[2]]);
    await expect(openDataKeys(db, { MASTER_KEY: b64(first) }, null)).rejects.toThrow(
      /MASTER_KEY: is not the key/,
    );
    // Put back for the other tests of this file.
    await new DataKeys({ current: first, previous: second }).rewrapAll(db);
  });

  it("refuses a wrong master key at start, naming MASTER_KEY, and never echoes it", async () => {
    const wrong = b64(key());
    const error = await openDataKeys(database.db, { MASTER_KEY: wrong }, null).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems.map((p) => p.variable)).toEqual(["MASTER_KEY"]);
    expect((error as Error).message).not.toContain(wrong);
  });
});

describe("MASTER_KEY", () => {
  it("is required with DATABASE_URL, and must be 32 bytes", () => {
    expect(() => masterKeysFrom({}, null)).toThrow(/MASTER_KEY: is required with DATABASE_URL/);
    for (const bad of ["short", b64(randomBytes(16)), "z".repeat(64)]) {
      const error = (() => {
        try {
          masterKeysFrom({ MASTER_KEY: bad }, null);
        } catch (e) {
          return e;
        }
      })();
      expect(error, bad).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems[0]!.variable).toBe("MASTER_KEY");
      expect((error as Error).message).not.toContain(bad);
    }
    const hex = randomBytes(32);
    expect(masterKeysFrom({ MASTER_KEY: hex.toString("hex") }, null).current.equals(hex)).toBe(true);
  });

  it("embedded: made on first start in the data directory, owner-only, and the same key after", () => {
    const dir = mkdtempSync(join(tmpdir(), "dl-master-"));
    try {
      const made = masterKeysFrom({}, dir).current;
      const path = join(dir, masterKeyFile);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(masterKeysFrom({}, dir).current.equals(made)).toBe(true);
      expect(readFileSync(path, "utf8").trim()).toBe(made.toString("base64"));
      // MASTER_KEY set wins over the file.
      const given = key();
      expect(masterKeysFrom({ MASTER_KEY: b64(given) }, dir).current.equals(given)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
