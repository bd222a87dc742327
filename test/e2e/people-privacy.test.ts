import { randomBytes } from "node:crypto";
import { catchUp, rebuildBeside } from "@dmarc-ledger/projection-engine";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addPerson, DashboardSession } from "../support/dashboard-session.js";
import { markersInDatabase } from "../support/marker-scan.js";
import {
  type Backend,
  backends,
  cli,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";

/**
 * The dashboard's people (docs/privacy.md, "People"): their addresses are sealed under a key of
 * their own and found by a blind index, so that removing a person, or erasing their tenant,
 * leaves their address nowhere: not in the events, the stream names, the read models, the
 * sessions or the throttle, as pg_dump of the whole database or the PGlite data directory's
 * files (WAL included) show.
 */
describe.each(backends)("people's addresses on %s: sealed, removed, erased", (name, makeBackend) => {
  const tag = randomBytes(4).toString("hex");
  // Markers: the addresses of the people removed or erased, never to be found in clear.
  const removedAddress = `zq${tag}rita@people-privacy.example`;
  const erasedAddress = `zq${tag}ernst@people-privacy.example`;
  const markers = [removedAddress, `zq${tag}rita`, erasedAddress, `zq${tag}ernst`];
  // Kept: the admin who stays, a person of both tenants, and erased beta's fresh admin.
  const acmeAdminAddress = `keeper-${tag}@people-privacy.example`;
  const sharedAddress = `shared-${tag}@people-privacy.example`;
  const freshAddress = `fresh-${tag}@people-privacy.example`;
  const password = "a long enough password";
  let backend: Backend;
  let handle: ServiceHandle;
  let acme: { tenantId: string; apiKey: string };
  let beta: { tenantId: string; apiKey: string };

  const signIn = (email: string) => new DashboardSession(handle.service.apiRoot).signIn(email, password);
  const listed = async (tenant: string) =>
    (await cli(backend.env, "user", "list", tenant, "--json")).out
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { email: string | null; role: string });

  /** Where a marker is found: pg_dump of the whole database, or every file of the data directory. */
  const markersFound = () => markersInDatabase(backend.env, markers);

  beforeAll(async () => {
    backend = await makeBackend();
    acme = JSON.parse((await cli(backend.env, "tenant", "create", "acme", "--json")).out);
    beta = JSON.parse((await cli(backend.env, "tenant", "create", "beta", "--json")).out);
    handle = await startTestService({
      ...backend.env,
      RATE_LIMIT_PER_SECOND: "100000",
      RATE_LIMIT_BURST: "100000",
    });
    const root = handle.service.apiRoot;
    await addPerson(backend.env, root, "acme", acmeAdminAddress, "admin", password);
    await addPerson(backend.env, root, "acme", removedAddress, "viewer", password);
    await addPerson(backend.env, root, "acme", sharedAddress, "viewer", password);
    await addPerson(backend.env, root, "beta", erasedAddress, "admin", password);
    expect((await cli(backend.env, "user", "add", "beta", sharedAddress, "--role", "viewer")).code).toBe(0);
  });

  afterAll(async () => {
    await handle?.stop();
    await backend?.cleanup();
  });

  it("signs in by address, lists and shows the address, and stores it sealed", async () => {
    const session = new DashboardSession(handle.service.apiRoot);
    const signedIn = await session.signIn(removedAddress.toUpperCase(), password);
    expect(signedIn.status, JSON.stringify(signedIn.json)).toBe(200);
    expect(signedIn.json).toMatchObject({ user: { email: removedAddress }, role: "viewer" });
    expect((await session.get("session")).json).toMatchObject({ user: { email: removedAddress } });
    const admin = new DashboardSession(handle.service.apiRoot);
    expect((await admin.signIn(acmeAdminAddress, password)).status).toBe(200);
    const users = (await admin.get("users")).json.records as { Email: string; Role: string }[];
    expect(users.map((user) => user.Email).sort()).toEqual(
      [acmeAdminAddress, removedAddress, sharedAddress].sort(),
    );
    expect((await listed("beta")).map((user) => user.email).sort()).toEqual(
      [erasedAddress, sharedAddress].sort(),
    );
    // A wrong password counts against the account by its blind index, not its address.
    expect((await new DashboardSession(handle.service.apiRoot).signIn(removedAddress, "wrong")).status).toBe(
      401,
    );
    // Sealed from the start: no marker in the dump (PGlite writes its files when it closes:
    // the last test reads them).
    if (backend.env.DATABASE_URL) expect(await markersFound()).toEqual([]);
  });

  it("user remove: a person of no other tenant is erased; signing in with the address fails like an unknown one", async () => {
    const removed = await cli(backend.env, "user", "remove", "acme", removedAddress);
    expect(removed.code, removed.err).toBe(0);
    expect(removed.out).toMatch(/erased them/);
    const refused = await signIn(removedAddress);
    const unknown = await signIn(`nobody-${tag}@people-privacy.example`);
    expect(refused.status).toBe(401);
    expect(refused.json).toEqual(unknown.json);
    expect((await listed("acme")).map((user) => user.email)).not.toContain(removedAddress);
    const again = await cli(backend.env, "user", "remove", "acme", removedAddress);
    expect(again.code).not.toBe(0);
    expect(again.err).toMatch(/has no account/);
  });

  it("tenant erase: every person of the tenant goes, those of another tenant stay there; a fresh admin gets in", async () => {
    const erasedAdmin = new DashboardSession(handle.service.apiRoot);
    expect((await erasedAdmin.signIn(erasedAddress, password)).status).toBe(200);
    const erased = await cli(
      backend.env,
      "tenant",
      "erase",
      "beta",
      "--confirm",
      beta.tenantId,
      "--admin",
      freshAddress,
    );
    expect(erased.code, erased.err).toBe(0);
    expect(erased.out).toContain("2 people");
    const link = /set-password#token=([A-Za-z0-9_-]+)/.exec(erased.out)?.[1];
    expect(link).toBeDefined();
    // Everyone of beta is signed out at once.
    expect((await erasedAdmin.get("session")).status).toBe(401);
    expect((await signIn(erasedAddress)).status).toBe(401);
    // The person of both tenants is still acme's, and only acme's.
    const shared = await signIn(sharedAddress);
    expect(shared.status).toBe(200);
    expect(shared.json).toMatchObject({ tenant: { id: acme.tenantId }, user: { email: sharedAddress } });
    const set = await new DashboardSession(handle.service.apiRoot).put("set_password", {
      token: link!,
      password,
    });
    expect(set.status, JSON.stringify(set.json)).toBe(200);
    const fresh = await signIn(freshAddress);
    expect(fresh.json).toMatchObject({
      tenant: { id: beta.tenantId },
      user: { email: freshAddress },
      role: "admin",
    });
    expect(await listed("beta")).toEqual([expect.objectContaining({ email: freshAddress, role: "admin" })]);
  });

  it(`no removed address is left: ${name === "PGlite" ? "the data directory's files" : "pg_dump"}; replay rebuilds the people`, async () => {
    const admin = new DashboardSession(handle.service.apiRoot);
    expect((await admin.signIn(acmeAdminAddress, password)).status).toBe(200);
    // Its UserSignedIn projected (the last sign-in), so that the replay is compared with everything.
    await catchUp({ store: handle.runtime.store, db: handle.runtime.db, projections: allProjections });
    const before = (await admin.get("users")).json;
    await rebuildBeside({
      store: handle.runtime.store,
      db: handle.runtime.db,
      projections: allProjections,
      concurrentSessions: handle.runtime.database.concurrentSessions,
    });
    expect((await admin.get("users")).json).toEqual(before);
    expect((await signIn(sharedAddress)).status).toBe(200);
    expect((await signIn(removedAddress)).status).toBe(401);
    if (!backend.env.DATABASE_URL) {
      // PGlite writes its files when it closes: read them after.
      await handle.stop();
      handle = undefined as never;
      const { openRuntime } = await import("@dmarc-ledger/runtime");
      const runtime = await openRuntime(backend.env);
      await runtime.close();
    }
    expect(await markersFound()).toEqual([]);
  });
});
