import { randomBytes } from "node:crypto";
import { type Database, migrateToLatest, openDatabase } from "@dmarc-ledger/db";
import { createPgliteDataDir, createTestDatabase } from "@dmarc-ledger/db/testing";
import { createPostgresEventStore, type EventStore, eventStoreMigrations } from "@dmarc-ledger/event-store";
import { DataKeys, personalDataMigrations } from "@dmarc-ledger/personal-data";
import { catchUp, projectionEngineMigrations } from "@dmarc-ledger/projection-engine";
import { createTenant, tenancyMigrations, tenantsProjection } from "@dmarc-ledger/tenancy";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  addressWindowMs,
  addUser,
  defaultUserSettings,
  firstPairDelayMs,
  freeFailuresPerPair,
  maxFailuresPerAccount,
  maxFailuresPerAddress,
  maxPairDelayMs,
  type SignInOutcome,
  setPassword,
  signIn,
  type UsersSchema,
  usersMigrations,
  usersProjection,
  WeakPasswordError,
} from "../src/index.js";

interface Opened {
  database: Database;
  cleanup(): Promise<void>;
}

const backends: { name: string; open(): Promise<Opened> }[] = [
  {
    name: "PostgreSQL",
    open: async () => {
      const test = await createTestDatabase("dl_sign_in");
      const database = await openDatabase({ kind: "postgres", url: test.url });
      return { database, cleanup: () => test.drop() };
    },
  },
  {
    name: "PGlite",
    open: async () => {
      const dir = await createPgliteDataDir("dl-sign-in-");
      const database = await openDatabase({ kind: "pglite", dataDir: dir.dataDir });
      return { database, cleanup: async () => dir.remove() };
    },
  },
];

const second = 1000;
const minute = 60 * second;

describe.each(backends)("sign-in throttling and password rules on $name", (backend) => {
  let opened: Opened;
  let db: Kysely<UsersSchema>;
  let store: EventStore;
  let tenantId: string;
  const keys = new DataKeys({ current: randomBytes(32), previous: null });
  const meta = { causedBy: "test" };

  beforeAll(async () => {
    opened = await backend.open();
    await migrateToLatest(
      opened.database.db,
      projectionEngineMigrations,
      tenancyMigrations,
      usersMigrations,
      personalDataMigrations,
      eventStoreMigrations,
    );
    db = opened.database.withSchema<UsersSchema>();
    store = createPostgresEventStore(opened.database);
    tenantId = (await createTenant(store, { name: "acme", region: "global" }, meta)).tenantId;
  });
  afterAll(async () => {
    await store?.close();
    await opened?.database.close();
    await opened?.cleanup();
  });

  const project = () =>
    catchUp({ store, db: opened.database.withSchema(), projections: [tenantsProjection, usersProjection] });

  async function linkFor(email: string) {
    const added = await addUser(store, db, keys, { tenantId, email, role: "admin", linkTtlMs: 60_000 }, meta);
    await project();
    return added.link.token;
  }

  async function member(email: string, password: string) {
    await setPassword(store, db, keys, { token: await linkFor(email), password }, {});
    await project();
  }

  const attempt = (email: string, password: string, address: string, now: Date): Promise<SignInOutcome> =>
    signIn(store, db, keys, { email, password, address, now }, defaultUserSettings, {});

  const waitOf = (outcome: SignInOutcome) => (outcome.status === "throttled" ? outcome.retryAfterSeconds : 0);

  it("slows an attacker's address with growing waits, and lets the owner in from their own", async () => {
    await member("owner@example.com", "the owner's long password");
    const owners = "192.0.2.10";
    const attackers = "203.0.113.7";
    let now = new Date();
    expect((await attempt("owner@example.com", "the owner's long password", owners, now)).status).toBe(
      "signed_in",
    );
    for (let i = 0; i < freeFailuresPerPair; i++) {
      expect((await attempt("owner@example.com", `guess ${i}`, attackers, now)).status).toBe("refused");
    }
    // Past the free failures each failure doubles the wait, up to its cap.
    const waits: number[] = [];
    for (let i = 0; i < 8; i++) {
      expect((await attempt("owner@example.com", `guess ${i}`, attackers, now)).status).toBe("refused");
      const refused = await attempt("owner@example.com", "the owner's long password", attackers, now);
      expect(refused.status).toBe("throttled");
      waits.push(waitOf(refused));
      now = new Date(now.getTime() + waitOf(refused) * second);
    }
    const first = firstPairDelayMs / second;
    const cap = maxPairDelayMs / second;
    expect(waits).toEqual([first, 2 * first, 4 * first, 8 * first, 16 * first, 32 * first, cap, cap]);
    // Meanwhile the owner signs in from their address, and from an address new to them.
    expect((await attempt("owner@example.com", "the owner's long password", owners, now)).status).toBe(
      "signed_in",
    );
    expect(
      (await attempt("owner@example.com", "the owner's long password", "198.51.100.3", now)).status,
    ).toBe("signed_in");
    // An account that does not exist is slowed the same way: the refusal tells nothing.
    for (let i = 0; i <= freeFailuresPerPair; i++)
      await attempt("ghost@example.com", "a guess", attackers, now);
    expect(waitOf(await attempt("ghost@example.com", "a guess", attackers, now))).toBe(first);
  });

  it("caps one address's failures over every account, and not other addresses'", async () => {
    await member("sprayed@example.com", "sprayed person's long password");
    const sprayer = "203.0.113.20";
    const now = new Date();
    for (let i = 0; i < maxFailuresPerAddress; i++) {
      expect((await attempt(`person${i}@example.com`, "Summer of 2026!", sprayer, now)).status).toBe(
        "refused",
      );
    }
    const refused = await attempt("sprayed@example.com", "sprayed person's long password", sprayer, now);
    expect(waitOf(refused)).toBe(addressWindowMs / second);
    expect(
      (await attempt("sprayed@example.com", "sprayed person's long password", "192.0.2.30", now)).status,
    ).toBe("signed_in");
    const later = new Date(now.getTime() + addressWindowMs);
    expect(
      (await attempt("sprayed@example.com", "sprayed person's long password", sprayer, later)).status,
    ).toBe("signed_in");
  });

  it("caps an account's failures from many addresses for unfamiliar addresses only", async () => {
    await member("target@example.com", "the target's long password");
    const owners = "192.0.2.40";
    const now = new Date();
    expect((await attempt("target@example.com", "the target's long password", owners, now)).status).toBe(
      "signed_in",
    );
    for (let i = 0; i < maxFailuresPerAccount; i++) {
      const address = `198.18.${Math.floor(i / 250)}.${i % 250}`;
      expect((await attempt("target@example.com", `guess ${i}`, address, now)).status).toBe("refused");
    }
    const stranger = await attempt("target@example.com", "the target's long password", "198.18.9.9", now);
    expect(waitOf(stranger)).toBeGreaterThan(50 * 60);
    expect((await attempt("target@example.com", "the target's long password", owners, now)).status).toBe(
      "signed_in",
    );
    const hourLater = new Date(now.getTime() + 60 * minute);
    expect(
      (await attempt("target@example.com", "the target's long password", "198.18.9.9", hourLater)).status,
    ).toBe("signed_in");
  });

  it("refuses all-whitespace and common passwords with a clear message, and takes an uncommon one", async () => {
    const token = await linkFor("newcomer@example.com");
    const refusal = (password: string) =>
      setPassword(store, db, keys, { token, password }, {}).then(
        () => "accepted",
        (error: unknown) => {
          expect(error).toBeInstanceOf(WeakPasswordError);
          return (error as Error).message;
        },
      );
    const blank = /^A password cannot be only spaces/;
    expect(await refusal(" ".repeat(12))).toMatch(blank);
    expect(await refusal("\t \u00a0\u3000".repeat(4))).toMatch(blank);
    const common = /^This password is on the list of common and breached passwords/;
    for (const password of [
      "qwertyuiop123",
      "1q2w3e4r5t6y",
      "password1234!",
      "iloveyouiloveyou",
      "Football2026",
      "aaaaaaaaaaaa",
      "123456789012",
    ]) {
      expect(await refusal(password), password).toMatch(common);
    }
    expect(await refusal("crisp ledger of tuesday's reports")).toBe("accepted");
    await project();
    const signedIn = await attempt(
      "newcomer@example.com",
      "crisp ledger of tuesday's reports",
      "192.0.2.50",
      new Date(),
    );
    expect(signedIn.status).toBe("signed_in");
  });
});
