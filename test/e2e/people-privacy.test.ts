import { randomBytes } from "node:crypto";
import { catchUp, rebuildBeside } from "@dmarc-ledger/projection-engine";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addPerson, DashboardSession } from "../support/dashboard-session.js";
import { markersInDatabase, markersInPostgresFiles } from "../support/marker-scan.js";
import { aggregateReportXml } from "../support/report-xml.js";
import {
  type Backend,
  backends,
  cli,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";
import { type SmtpReceiver, startSmtpReceiver } from "../support/smtp-receiver.js";
import { eventually } from "../support/webhook-receiver.js";

const day = 86_400;
const today = Math.floor(Date.now() / 1000 / day) * day;

/**
 * The dashboard's people (docs/privacy.md, "People"): their addresses are sealed under a key of
 * their own and found by a blind index, so that removing a person, or erasing their tenant,
 * leaves their address nowhere: not in the events, the stream names, the read models, the
 * sessions, the throttle or the alerts' mail queue, as pg_dump of the whole database, its table
 * files and the WAL after a checkpoint, or the PGlite data directory's files (WAL included) show.
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
  let smtp: SmtpReceiver;

  const signIn = (email: string) => new DashboardSession(handle.service.apiRoot).signIn(email, password);
  const listed = async (tenant: string) =>
    (await cli(backend.env, "user", "list", tenant, "--json")).out
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { email: string | null; role: string });

  /**
   * Where a marker is found: pg_dump of the whole database, its files and the WAL, or every file
   * of the data directory.
   */
  const markersFound = async () => [
    ...(await markersInDatabase(backend.env, markers)),
    ...(backend.env.DATABASE_URL ? await markersInPostgresFiles(backend.env.DATABASE_URL, markers) : []),
  ];

  beforeAll(async () => {
    backend = await makeBackend();
    acme = JSON.parse((await cli(backend.env, "tenant", "create", "acme", "--json")).out);
    beta = JSON.parse((await cli(backend.env, "tenant", "create", "beta", "--json")).out);
    smtp = await startSmtpReceiver();
    handle = await startTestService({
      ...backend.env,
      RATE_LIMIT_PER_SECOND: "100000",
      RATE_LIMIT_BURST: "100000",
      // The alerts mail every person of a tenant: the path their addresses take to the relay.
      ALERT_SMTP_URL: smtp.url,
      ALERT_NAME_WAIT: "0s",
      ALERT_SETTLE: "0s",
      ALERT_DIGEST: "off",
      DNS_NAMESERVERS: "127.0.0.1:9",
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
    await smtp?.close();
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

  it("mails each person an alert, the queue naming them by id only, never their address", async () => {
    // A new sender for each tenant's domain: a new_sender alert, mailed to everyone of the tenant.
    for (const [tenant, domain] of [
      [acme, `acme-${tag}.com`],
      [beta, `beta-${tag}.com`],
    ] as const) {
      expect((await handle.put("add_domain", tenant.apiKey, { domain })).status).toBe(200);
      for (const [id, ips] of [
        ["base", ["192.0.2.1"]],
        ["new", ["192.0.2.1", "198.51.100.7"]],
      ] as const) {
        const xml = aggregateReportXml({
          reportId: `${domain}-${id}`,
          domain,
          organization: "google.com",
          begin: today - day,
          end: today - 1,
          rows: ips.map((sourceIp) => ({ sourceIp, count: 10 })),
        });
        const response = await fetch(new URL("reports", handle.service.apiRoot), {
          method: "POST",
          headers: { Authorization: `Bearer ${tenant.apiKey}`, "Content-Type": "application/xml" },
          body: xml,
        });
        expect(response.status).toBe(202);
      }
    }
    const mailedTo = () => new Set(smtp.mails.flatMap((mail) => mail.to));
    await eventually(
      () => [removedAddress, erasedAddress, acmeAdminAddress].every((to) => mailedTo().has(to)),
      "the alert mailed to the people of both tenants",
    );
    // The queue holds the mails, by person.
    const queued = await handle.runtime.db
      .selectFrom("alert_email")
      .select(["tenant_id", "status"])
      .execute();
    expect(queued.filter((row) => row.tenant_id === acme.tenantId).length).toBe(3);
    expect(queued.filter((row) => row.tenant_id === beta.tenantId).length).toBe(2);
    // Sealed while the people exist too: no marker in the dump, the table files or the WAL.
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
