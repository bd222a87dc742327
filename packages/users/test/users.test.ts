import { randomBytes } from "node:crypto";
import { type Database, migrateToLatest, openDatabase } from "@dmarc-ledger/db";
import { createTestDatabase, type TestDatabase } from "@dmarc-ledger/db/testing";
import { createPostgresEventStore, type EventStore, eventStoreMigrations } from "@dmarc-ledger/event-store";
import { streams } from "@dmarc-ledger/events";
import { DataKeys, keyScopes, personalDataMigrations, personScope } from "@dmarc-ledger/personal-data";
import { catchUp, projectionEngineMigrations } from "@dmarc-ledger/projection-engine";
import { createTenant, tenancyMigrations, tenantsProjection } from "@dmarc-ledger/tenancy";
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  addUser,
  changeRole,
  csrfTokenOf,
  defaultUserSettings,
  findSession,
  findUserId,
  InvalidPasswordLinkError,
  LastAdminError,
  listTenantUsers,
  removeUser,
  setPassword,
  signIn,
  signOut,
  tenantActivity,
  type UsersSchema,
  usersMigrations,
  usersProjection,
  WeakPasswordError,
} from "../src/index.js";

let testDb: TestDatabase;
let database: Database;
let db: Kysely<UsersSchema>;
let store: EventStore;
let tenantId: string;
const keys = new DataKeys({ current: randomBytes(32), previous: null });
let otherTenantId: string;
const meta = { causedBy: "test" };
const settings = defaultUserSettings;
const projections = [tenantsProjection, usersProjection];
const project = () => catchUp({ store, db: database.withSchema(), projections });

beforeAll(async () => {
  testDb = await createTestDatabase("dl_users");
  database = await openDatabase({ kind: "postgres", url: testDb.url });
  await migrateToLatest(
    database.db,
    projectionEngineMigrations,
    tenancyMigrations,
    usersMigrations,
    personalDataMigrations,
    eventStoreMigrations,
  );
  db = database.withSchema<UsersSchema>();
  store = createPostgresEventStore(database);
  tenantId = (await createTenant(store, { name: "acme", region: "global" }, meta)).tenantId;
  otherTenantId = (await createTenant(store, { name: "other", region: "global" }, meta)).tenantId;
});

afterAll(async () => {
  await store?.close();
  await database?.close();
  await testDb?.drop();
});

async function member(email: string, role: "admin" | "viewer", password: string, tenant = tenantId) {
  const added = await addUser(store, db, keys, { tenantId: tenant, email, role, linkTtlMs: 60_000 }, meta);
  await project();
  await setPassword(store, db, keys, { token: added.link.token, password }, {});
  await project();
  return added;
}

const signInAs = (email: string, password: string, address = "192.0.2.1") =>
  signIn(store, db, keys, { email, password, address }, settings, {});

describe("users, passwords and sessions", () => {
  it("adds a user with a one-time link, which sets the password once", async () => {
    const added = await addUser(
      store,
      db,
      keys,
      { tenantId, email: " Alice@Example.COM ", role: "admin", linkTtlMs: 60_000 },
      meta,
    );
    expect(added).toMatchObject({ email: "alice@example.com", outcome: "created" });
    await project();
    await expect(
      setPassword(store, db, keys, { token: added.link.token, password: "short" }, {}),
    ).rejects.toThrow(WeakPasswordError);
    await setPassword(store, db, keys, { token: added.link.token, password: "correct horse battery" }, {});
    await expect(
      setPassword(store, db, keys, { token: added.link.token, password: "another long password" }, {}),
    ).rejects.toThrow(InvalidPasswordLinkError);
    await project();
    const users = await listTenantUsers(db, keys, tenantId);
    expect(users).toMatchObject([{ email: "alice@example.com", role: "admin", passwordSet: true }]);
    // Only hashes are stored: neither the token nor the password is in any table.
    const { rows } = await sql<Record<string, unknown>>`select * from user_credential`.execute(database.db);
    expect(JSON.stringify(rows)).not.toContain("correct horse");
    expect(String(rows[0]!.password_hash)).toMatch(/^\$argon2id\$/);
  });

  it("refuses an expired link", async () => {
    const added = await addUser(
      store,
      db,
      keys,
      { tenantId, email: "late@example.com", role: "viewer", linkTtlMs: 1 },
      meta,
    );
    await project();
    await new Promise((resolve) => setTimeout(resolve, 5));
    await expect(
      setPassword(store, db, keys, { token: added.link.token, password: "a long enough password" }, {}),
    ).rejects.toThrow(InvalidPasswordLinkError);
  });

  it("signs in with the right password only, and says the same for unknown addresses", async () => {
    await member("bob@example.com", "viewer", "bob's long password");
    const wrong = await signInAs("bob@example.com", "not bob's password", "192.0.2.10");
    const unknown = await signInAs("nobody@example.com", "whatever password", "192.0.2.10");
    expect(wrong).toEqual({ status: "refused" });
    expect(unknown).toEqual(wrong);
    const right = await signInAs("BOB@example.com", "bob's long password", "192.0.2.10");
    if (right.status !== "signed_in") throw new Error(`not signed in: ${right.status}`);
    const bobId = await findUserId(store, db, keys, "bob@example.com");
    expect(right.session).toMatchObject({ userId: bobId, tenantId, role: "viewer" });
    const found = await findSession(db, right.token, settings);
    expect(found).toMatchObject({ userId: bobId, stream: right.session.stream, tenantId, role: "viewer" });
    expect(await findSession(db, `${right.token}x`, settings)).toBeNull();
    // The session's CSRF token comes from its token alone.
    expect(csrfTokenOf(right.token)).not.toBe(csrfTokenOf(`${right.token}x`));
    const history = await store.readStream(right.session.stream);
    expect(history.map((event) => event.type)).toContain("UserSignedIn");
    const recorded = JSON.stringify(history.map((event) => [event.data, event.metadata]));
    expect(recorded).not.toContain(right.token);
    expect(recorded).not.toContain("bob's long password");
  });

  it("ends sessions that are idle or past their absolute end", async () => {
    const signedIn = await signInAs("bob@example.com", "bob's long password", "192.0.2.11");
    if (signedIn.status !== "signed_in") throw new Error("not signed in");
    const later = (ms: number) => new Date(Date.now() + ms);
    expect(
      await findSession(db, signedIn.token, settings, later(settings.sessionIdleMs - 60_000)),
    ).not.toBeNull();
    // That use moved the idle deadline on, but not the absolute end.
    const idle = { ...settings, sessionIdleMs: 10 * 60_000 };
    expect(
      await findSession(db, signedIn.token, idle, later(settings.sessionIdleMs + 11 * 60_000)),
    ).toBeNull();
    const again = await signInAs("bob@example.com", "bob's long password", "192.0.2.11");
    if (again.status !== "signed_in") throw new Error("not signed in");
    expect(await findSession(db, again.token, settings, later(settings.sessionAbsoluteMs + 1000))).toBeNull();
  });

  it("signs out one session or every session of the user", async () => {
    const first = await signInAs("bob@example.com", "bob's long password", "192.0.2.12");
    const second = await signInAs("bob@example.com", "bob's long password", "192.0.2.12");
    if (first.status !== "signed_in" || second.status !== "signed_in") throw new Error("not signed in");
    await signOut(store, db, { token: first.token, session: first.session, everywhere: false }, {});
    expect(await findSession(db, first.token, settings)).toBeNull();
    expect(await findSession(db, second.token, settings)).not.toBeNull();
    const third = await signInAs("bob@example.com", "bob's long password", "192.0.2.12");
    if (third.status !== "signed_in") throw new Error("not signed in");
    await signOut(store, db, { token: third.token, session: third.session, everywhere: true }, {});
    expect(await findSession(db, second.token, settings)).toBeNull();
    expect(await findSession(db, third.token, settings)).toBeNull();
  });

  it("changes and removes roles, keeping one admin, and a removed user's sessions end", async () => {
    const dave = await member("dave@example.com", "admin", "dave's long password");
    const alice = (await listTenantUsers(db, keys, tenantId)).find(
      (user) => user.email === "alice@example.com",
    )!;
    await changeRole(store, db, { tenantId, userId: alice.userId, role: "viewer" }, meta);
    await project();
    await expect(
      changeRole(store, db, { tenantId, userId: dave.userId, role: "viewer" }, meta),
    ).rejects.toThrow(LastAdminError);
    const session = await signInAs("dave@example.com", "dave's long password", "192.0.2.20");
    if (session.status !== "signed_in") throw new Error("not signed in");
    await changeRole(store, db, { tenantId, userId: alice.userId, role: "admin" }, meta);
    await project();
    await removeUser(store, db, { tenantId, userId: dave.userId }, { causedBy: `user:${alice.userId}` });
    await project();
    expect(await findSession(db, session.token, settings)).toBeNull();
    expect((await signInAs("dave@example.com", "dave's long password", "192.0.2.20")).status).toBe("refused");
    const trail = await tenantActivity(db, { tenantId, page: 1, perPage: 100 });
    expect(trail.records[0]).toMatchObject({
      event: "UserRoleRevoked",
      subject: `user:${dave.userId}`,
      causedBy: `user:${alice.userId}`,
    });
  });

  it("keeps tenants apart: a session belongs to one tenant, another's members are not listed", async () => {
    await member("erin@example.com", "admin", "erin's long password", otherTenantId);
    const erin = await signInAs("erin@example.com", "erin's long password", "192.0.2.30");
    if (erin.status !== "signed_in") throw new Error("not signed in");
    expect(erin.session.tenantId).toBe(otherTenantId);
    expect((await listTenantUsers(db, keys, tenantId)).map((user) => user.email)).not.toContain(
      "erin@example.com",
    );
    expect((await listTenantUsers(db, keys, otherTenantId)).map((user) => user.email)).toEqual([
      "erin@example.com",
    ]);
  });

  it("stores no address in clear: not in the tables, the events or the stream names", async () => {
    const marker = "sealed-marker-person@example.com";
    await member(marker, "viewer", "marker's long password");
    await signInAs(marker, "wrong password", "192.0.2.40");
    const dump = async () => {
      const tables = ["user_account", "user_password_link", "user_session", "sign_in_throttle", "user_role"];
      const parts = [];
      for (const table of tables) {
        parts.push(JSON.stringify((await sql.raw(`select * from ${table}`).execute(database.db)).rows));
      }
      const { rows } = await sql<{ stream_id: string; data: unknown }>`select * from events`.execute(
        database.db,
      );
      const { rows: names } = await sql`select * from streams`.execute(database.db);
      return parts.join("\n") + JSON.stringify(rows) + JSON.stringify(names);
    };
    const everything = await dump();
    expect(everything).not.toContain("sealed-marker-person");
    // Nor its plain SHA-256, which anyone could compute from a guess.
    expect(everything).not.toContain(streams.legacyUser(marker).slice(5));
    expect((await listTenantUsers(db, keys, tenantId)).map((user) => user.email)).toContain(marker);
  });

  it("erases a person removed from their last tenant: key shredded, account gone, the address free again", async () => {
    const frank = await member("frank@example.com", "viewer", "frank's long password");
    await addUser(
      store,
      db,
      keys,
      { tenantId: otherTenantId, email: "frank@example.com", role: "viewer", linkTtlMs: 60_000 },
      meta,
    );
    await project();
    // Still in another tenant: only the role goes.
    expect(await removeUser(store, db, { tenantId, userId: frank.userId }, meta)).toMatchObject({
      erased: false,
    });
    await project();
    expect((await signInAs("frank@example.com", "frank's long password", "192.0.2.50")).status).toBe(
      "signed_in",
    );
    expect(await keyScopes(database.db)).not.toContain(personScope(frank.userId));
    const { rows: before } =
      await sql`select 1 from data_key where tenant_id = ${personScope(frank.userId)}`.execute(database.db);
    expect(before).toHaveLength(1);
    expect(
      await removeUser(store, db, { tenantId: otherTenantId, userId: frank.userId }, meta),
    ).toMatchObject({ erased: true });
    await project();
    const { rows: after } =
      await sql`select 1 from data_key where tenant_id = ${personScope(frank.userId)}`.execute(database.db);
    expect(after).toHaveLength(0);
    expect((await signInAs("frank@example.com", "frank's long password", "192.0.2.51")).status).toBe(
      "refused",
    );
    expect(await findUserId(store, db, keys, "frank@example.com")).toBeNull();
    const { rows: account } = await sql`select 1 from user_account where user_id = ${frank.userId}`.execute(
      database.db,
    );
    expect(account).toHaveLength(0);
    // The stream's UserCreated can no longer be opened.
    const history = await store.readStream(await findStreamOf("frank@example.com"));
    const created = history.find((event) => event.type === "UserCreated")!;
    expect(await keys.open(database.db, [(created.data as { email: never }).email])).toEqual([null]);
    expect(history.at(-1)!.type).toBe("UserErased");
    // Added again: a new account, on the same stream, with a key of its own.
    const again = await addUser(
      store,
      db,
      keys,
      { tenantId, email: "frank@example.com", role: "viewer", linkTtlMs: 60_000 },
      meta,
    );
    expect(again.outcome).toBe("created");
    expect(again.userId).not.toBe(frank.userId);
    await project();
    expect((await listTenantUsers(db, keys, tenantId)).map((user) => user.email)).toContain(
      "frank@example.com",
    );
  });

  it("reads people made before addresses were sealed (UserCreated v1, SHA-256 stream)", async () => {
    const email = "legacy@example.com";
    const stream = streams.legacyUser(email);
    await store.append(
      stream,
      [
        {
          type: "UserCreated",
          data: { userId: "legacy0001", email },
          metadata: { ...meta, schemaVersion: 1 },
        },
        {
          type: "UserRoleGranted",
          data: { userId: "legacy0001", tenantId, role: "viewer" },
          metadata: { ...meta, schemaVersion: 1 },
        },
      ],
      "no_stream",
    );
    await project();
    expect(await findUserId(store, db, keys, email)).toBe("legacy0001");
    const link = await addUser(store, db, keys, { tenantId, email, role: "viewer", linkTtlMs: 60_000 }, meta);
    expect(link).toMatchObject({ userId: "legacy0001", outcome: "unchanged" });
    await project();
    await setPassword(store, db, keys, { token: link.link.token, password: "legacy long password" }, {});
    await project();
    const signedIn = await signInAs(email, "legacy long password", "192.0.2.60");
    expect(signedIn).toMatchObject({ status: "signed_in", session: { userId: "legacy0001", stream } });
    expect(
      (await listTenantUsers(db, keys, tenantId)).find((user) => user.userId === "legacy0001")?.email,
    ).toBe(email);
    // Removed: erased on its own stream; added again, a sealed account on today's stream.
    expect(await removeUser(store, db, { tenantId, userId: "legacy0001" }, meta)).toMatchObject({
      erased: true,
    });
    await project();
    expect(await findUserId(store, db, keys, email)).toBeNull();
    const again = await addUser(
      store,
      db,
      keys,
      { tenantId, email, role: "viewer", linkTtlMs: 60_000 },
      meta,
    );
    expect(again.outcome).toBe("created");
    expect(await findStreamOf(email)).not.toBe(stream);
  });
});

/** The stream of an address's account (or where a new one would go). */
async function findStreamOf(email: string): Promise<string> {
  const { rows } = await sql<{ stream: string }>`select stream from user_account`.execute(database.db);
  const { userStreamsOf } = await import("../src/addresses.js");
  const { current, legacy } = await userStreamsOf(database.db, keys, email);
  const known = rows.map((row) => row.stream);
  if (known.includes(current)) return current;
  if (known.includes(legacy)) return legacy;
  return current;
}
