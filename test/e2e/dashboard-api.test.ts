import { readFileSync } from "node:fs";
import { apiConfigFromEnv, createApiApp } from "@dmarc-ledger/api";
import { waitForProjections } from "@dmarc-ledger/projection-engine";
import { runtimeDataKeys } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { addDomain, createTenant } from "@dmarc-ledger/tenancy";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { capturingLogger } from "../support/capturing-logger.js";
import { aggregateCorpus, failureCorpus } from "../support/corpus.js";
import { addPerson, DashboardSession } from "../support/dashboard-session.js";
import {
  type Backend,
  cli,
  postgresBackend,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";

const period = "start=0&end=2000000000";
const passwords = {
  acmeAdmin: "acme admin's long password",
  acmeViewer: "acme viewer's long password",
  otherAdmin: "other admin's long password",
};

/**
 * The dashboard's side of the API: people sign in with a password and use the same endpoints as
 * keys, through a session cookie, with a CSRF token on writes. Two tenants (acme with
 * example.com, other with example.de), the corpus imported.
 */
describe("sessions, roles, CSRF and tenant isolation on the API", () => {
  let backend: Backend;
  let handle: ServiceHandle;
  let env: NodeJS.ProcessEnv;
  let acmeKey: string;
  let acmeAdmin: DashboardSession;
  let acmeViewer: DashboardSession;
  let otherAdmin: DashboardSession;
  const logLines: string[] = [];
  const secrets: string[] = [];

  beforeAll(async () => {
    backend = await postgresBackend();
    handle = await startTestService(backend.env, capturingLogger(logLines, "debug"));
    env = { ...backend.env, PUBLIC_BASE_URL: handle.service.apiRoot };
    const meta = { causedBy: "test" };
    const acme = await createTenant(handle.runtime.store, { name: "acme", region: "global" }, meta);
    const other = await createTenant(handle.runtime.store, { name: "other", region: "global" }, meta);
    acmeKey = acme.apiKey;
    await addDomain(handle.runtime.store, { tenantId: acme.tenantId, domain: "example.com" }, meta);
    await addDomain(handle.runtime.store, { tenantId: other.tenantId, domain: "example.de" }, meta);
    const imported = await cli(env, "import", aggregateCorpus, failureCorpus);
    expect([0, 2], imported.err).toContain(imported.code);
    const root = handle.service.apiRoot;
    const people = [
      await addPerson(env, root, "acme", "admin@acme.example", "admin", passwords.acmeAdmin),
      await addPerson(env, root, "acme", "viewer@acme.example", "viewer", passwords.acmeViewer),
      await addPerson(env, root, "other", "admin@other.example", "admin", passwords.otherAdmin),
    ];
    secrets.push(...Object.values(passwords), ...people.map((person) => new URL(person.link).hash.slice(7)));
    acmeAdmin = new DashboardSession(root);
    acmeViewer = new DashboardSession(root);
    otherAdmin = new DashboardSession(root);
    expect((await acmeAdmin.signIn("admin@acme.example", passwords.acmeAdmin)).status).toBe(200);
    expect((await acmeViewer.signIn("Viewer@Acme.example", passwords.acmeViewer)).status).toBe(200);
    expect((await otherAdmin.signIn("admin@other.example", passwords.otherAdmin)).status).toBe(200);
    for (const session of [acmeAdmin, acmeViewer, otherAdmin]) secrets.push(session.cookie!.split("=")[1]!);
    // Everything imported is counted before the tests compare answers.
    const head = await handle.runtime.store.headPosition();
    await waitForProjections(handle.runtime.db, allProjections, head!, 30_000);
  });
  afterAll(async () => {
    await handle?.stop();
    await backend?.cleanup();
  });

  it("sets an httpOnly, SameSite=Lax session cookie, and answers who is signed in", async () => {
    const session = new DashboardSession(handle.service.apiRoot);
    const answer = await session.signIn("admin@acme.example", passwords.acmeAdmin);
    const cookie = answer.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^dl_session=[A-Za-z0-9_-]{43};/);
    expect(cookie).toMatch(/; httponly/i);
    expect(cookie).toMatch(/; samesite=lax/i);
    expect(cookie).toMatch(/; path=\//i);
    expect(cookie).not.toMatch(/; secure/i);
    expect(answer.json).toMatchObject({
      kind: "session",
      tenant: { name: "acme" },
      user: { email: "admin@acme.example" },
      role: "admin",
      capabilities: ["read", "write", "ingest", "admin"],
    });
    const me = await session.get("session");
    expect(me.json).toMatchObject({ role: "admin", csrf_token: session.csrfToken });
    expect((await acmeViewer.get("session")).json).toMatchObject({ role: "viewer", capabilities: ["read"] });
  });

  it("behind https, the cookie is Secure and __Host- prefixed", async () => {
    const app = createApiApp({
      db: handle.runtime.db,
      store: handle.runtime.store,
      projections: allProjections,
      config: apiConfigFromEnv({ PUBLIC_BASE_URL: "https://dmarc.example/api/" }, 0),
      logger: capturingLogger([]),
      dataKeys: await runtimeDataKeys(handle.runtime, backend.env),
    });
    const server = app.listen(0);
    try {
      const port = (server.address() as { port: number }).port;
      const session = new DashboardSession(`http://127.0.0.1:${port}/api/`);
      const answer = await session.signIn("admin@acme.example", passwords.acmeAdmin);
      const cookie = answer.headers.get("set-cookie")!;
      expect(cookie).toMatch(/^__Host-dl_session=/);
      expect(cookie).toMatch(/; secure/i);
      expect(cookie).toMatch(/; httponly/i);
    } finally {
      server.close();
    }
  });

  it("says the same for a wrong password and an unknown address, and throttles repeated failures", async () => {
    const wrong = await new DashboardSession(handle.service.apiRoot).signIn(
      "admin@acme.example",
      "not it at all",
    );
    const unknown = await new DashboardSession(handle.service.apiRoot).signIn(
      "nobody@acme.example",
      "not it at all",
    );
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(unknown.json).toEqual(wrong.json);
    expect(wrong.headers.get("set-cookie")).toBeNull();
    let last = wrong;
    for (let attempt = 0; attempt < 6; attempt++) {
      last = await new DashboardSession(handle.service.apiRoot).signIn("viewer@acme.example", "wrong again");
    }
    expect(last.status).toBe(429);
    expect(last.json.message).toMatch(
      /^Too many failed sign-ins from your address; try again in \d+ (seconds?|minutes?)\.$/,
    );
    expect(Number(last.headers.get("retry-after"))).toBeGreaterThan(0);
    // The right password is refused too while throttled: a guesser learns nothing from it.
    const right = await new DashboardSession(handle.service.apiRoot).signIn(
      "viewer@acme.example",
      passwords.acmeViewer,
    );
    expect(right.status).toBe(429);
  });

  it("refuses a session's write without the CSRF token, and a viewer's write whatever it sends", async () => {
    const missing = await acmeAdmin.put("add-domain", { domain: "sub.example.com" }, null);
    expect(missing.status).toBe(403);
    expect(missing.json.code).toBe("csrf_token_invalid");
    const forged = await acmeAdmin.put("add-domain", { domain: "sub.example.com" }, "x".repeat(43));
    expect(forged.json.code).toBe("csrf_token_invalid");
    const upload = await acmeAdmin.request("POST", "reports", {
      body: readFileSync(`${aggregateCorpus}veeam.com!example.com!1530133200!1530219600.xml`),
      csrf: null,
    });
    expect(upload.json.code).toBe("csrf_token_invalid");
    // Another session's token is not this one's.
    expect(
      (await acmeAdmin.put("add-domain", { domain: "sub.example.com" }, otherAdmin.csrfToken)).status,
    ).toBe(403);
    const viewer = await acmeViewer.put("add-domain", { domain: "example.org" });
    expect(viewer.status).toBe(403);
    expect(viewer.json).toMatchObject({
      code: "missing_scope",
      message: "Only an admin of this account can do this.",
    });
    expect((await acmeViewer.get("users")).status).toBe(403);
    const done = await acmeAdmin.put("add-domain", { domain: "example.org" });
    expect(done.status).toBe(200);
    // Keys never manage people or keys.
    const keyed = await fetch(`${handle.service.apiRoot}users`, {
      headers: { Authorization: `Bearer ${acmeKey}` },
    });
    expect(keyed.status).toBe(403);
  });

  it("answers a session exactly what it answers the tenant's key, for every period endpoint", async () => {
    for (const path of [
      "aggregate_by_domain",
      "aggregate_by_domain_group",
      "aggregate_by_source",
      "aggregate_by_unaligned_source",
      "aggregate_by_organization",
      "forensic",
    ]) {
      const url = `${path}?${period}`;
      const byKey = await handle.get(url, acmeKey);
      const bySession = await acmeViewer.get(url);
      expect(bySession.status, path).toBe(200);
      expect(bySession.json, path).toEqual(byKey.json);
    }
  });

  it("narrows every period endpoint to one domain, and refuses another tenant's", async () => {
    const all = (await acmeAdmin.get(`aggregate_by_source?${period}&per_page=1000`)).json.records as {
      DomainPublished: string;
    }[];
    const narrowed = (await acmeAdmin.get(`aggregate_by_source?${period}&per_page=1000&domain=example.org`))
      .json;
    expect(narrowed.total).toBe(0);
    const exampleCom = (await acmeAdmin.get(`aggregate_by_source?${period}&per_page=1000&domain=EXAMPLE.com`))
      .json.records as { DomainPublished: string }[];
    expect(exampleCom.length).toBe(all.filter((r) => /(^|\.)example\.com$/.test(r.DomainPublished)).length);
    expect(exampleCom.length).toBeGreaterThan(0);
    for (const path of ["aggregate_by_domain", "aggregate_by_organization", "forensic", "inputs"]) {
      const refused = await acmeAdmin.get(`${path}?${period}&domain=example.de`);
      expect(refused.status, path).toBe(404);
      expect(refused.json.code, path).toBe("unknown_domain");
    }
  });

  it("shows a session of one tenant nothing of another, in any endpoint", async () => {
    const acmeUsers = (await acmeAdmin.get("users")).json.records as { UserId: string; Email: string }[];
    const acmeKeys = (await acmeAdmin.get("api_keys")).json.records as { KeyId: string }[];
    const otherSees = JSON.stringify(
      await Promise.all(
        [
          `aggregate_by_domain?${period}`,
          `aggregate_by_domain_group?${period}`,
          `aggregate_by_source?${period}&per_page=1000`,
          `aggregate_by_unaligned_source?${period}&per_page=1000`,
          `aggregate_by_organization?${period}`,
          `forensic?${period}`,
          `inputs?${period}&per_page=1000`,
          "domains",
          "users",
          "api_keys",
          "activity",
          "session",
        ].map(async (path) => (await otherAdmin.get(path)).json),
      ),
    );
    expect(otherSees).toContain("example.de");
    expect(otherSees).not.toMatch(/example\.(com|org)/);
    expect(otherSees).not.toContain("acme");
    for (const user of acmeUsers) expect(otherSees).not.toContain(user.UserId);
    for (const key of acmeKeys) expect(otherSees).not.toContain(key.KeyId);
    expect((await otherAdmin.get("history?domain=example.com")).status).toBe(404);
    expect((await otherAdmin.get("safe_spf?domain=example.com")).status).toBe(404);
    expect((await otherAdmin.put("remove_user", { user_id: acmeUsers[0]!.UserId })).status).toBe(404);
    expect(
      (await otherAdmin.put("user_role", { user_id: acmeUsers[0]!.UserId, role: "viewer" })).status,
    ).toBe(404);
    expect((await otherAdmin.put("password_link", { user_id: acmeUsers[0]!.UserId })).status).toBe(404);
    expect((await otherAdmin.put("revoke_api_key", { key_id: acmeKeys[0]!.KeyId })).status).toBe(404);
    expect((await otherAdmin.put("domain_group", { domain: "example.com", group: "x" })).status).toBe(404);
  });

  it("lists a tenant's inputs: those naming its domains and its own uploads, and reprocesses its rejected ones", async () => {
    const junk = new TextEncoder().encode("this is not a DMARC report");
    const uploaded = await acmeAdmin.request("POST", "reports", { body: junk });
    expect(uploaded.status).toBe(202);
    expect(uploaded.json.outcome).toBe("rejected");
    const sha256 = uploaded.json.sha256 as string;
    const acmeInputs = (await acmeAdmin.get(`inputs?${period}&per_page=1000`)).json.records as {
      Sha256: string;
      Outcome: string;
      Reason: string | null;
      Items: { domain?: string }[];
    }[];
    const mine = acmeInputs.find((input) => input.Sha256 === sha256);
    expect(mine).toMatchObject({ Outcome: "rejected", Reason: expect.stringMatching(/./) });
    expect(acmeInputs.some((input) => input.Items.some((item) => item.domain === "example.com"))).toBe(true);
    // Only acme's reports are listed in its inputs; the corpus's other rejected files are nobody's.
    for (const input of acmeInputs) {
      for (const item of input.Items)
        if (item.domain) expect(item.domain).toMatch(/(^|\.)example\.(com|org)$/);
    }
    const otherInputs = (await otherAdmin.get(`inputs?${period}&per_page=1000`)).json.records as {
      Sha256: string;
    }[];
    expect(otherInputs.map((input) => input.Sha256)).not.toContain(sha256);
    expect(otherInputs.length).toBeGreaterThan(0);
    expect((await otherAdmin.put("reprocess_input", { sha256 })).status).toBe(404);
    expect((await acmeViewer.put("reprocess_input", { sha256 })).status).toBe(403);
    const again = await acmeAdmin.put("reprocess_input", { sha256 });
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({
      before: "rejected",
      outcome: "rejected",
      reason: expect.stringMatching(/./),
    });
    const rejectedOnly = (await acmeAdmin.get(`inputs?${period}&status=rejected`)).json.records as {
      Outcome: string;
    }[];
    expect(rejectedOnly.every((input) => input.Outcome === "rejected")).toBe(true);
  });

  it("manages people and keys, and the trail names who did what", async () => {
    const added = await acmeAdmin.put("add_user", { email: "new@acme.example", role: "viewer" });
    expect(added.status).toBe(200);
    expect(added.json.set_password_url).toMatch(
      new RegExp(
        `^${new URL("../", handle.service.apiRoot).toString()}set-password#token=[A-Za-z0-9_-]{43}$`,
      ),
    );
    secrets.push(String(added.json.set_password_url).split("#token=")[1]!);
    const userId = added.json.user_id as string;
    expect((await acmeAdmin.put("user_role", { user_id: userId, role: "admin" })).status).toBe(200);
    // Of no other tenant: erased, their address shredded.
    expect((await acmeAdmin.put("remove_user", { user_id: userId })).json).toEqual({
      status: "SUCCESS",
      erased: true,
    });
    const issued = await acmeAdmin.put("issue_api_key", { scopes: "read,ingest" });
    expect(issued.json).toMatchObject({
      scopes: ["read", "ingest"],
      api_key: expect.stringMatching(/^dlk_global_/),
    });
    secrets.push(issued.json.api_key as string);
    const byNewKey = await handle.get("domains", issued.json.api_key as string);
    expect(byNewKey.status).toBe(200);
    expect((await acmeAdmin.put("revoke_api_key", { key_id: issued.json.key_id as string })).status).toBe(
      200,
    );
    expect((await handle.get("domains", issued.json.api_key as string)).status).toBe(401);
    const me = (await acmeAdmin.get("session")).json.user as { id: string };
    const trail = (await acmeAdmin.get("activity")).json.records as Record<string, unknown>[];
    expect(trail.slice(0, 5)).toEqual([
      expect.objectContaining({
        Event: "ApiKeyRevoked",
        CausedBy: `user:${me.id}`,
        CausedByEmail: "admin@acme.example",
      }),
      expect.objectContaining({ Event: "ApiKeyIssued", CausedBy: `user:${me.id}` }),
      expect.objectContaining({ Event: "UserRoleRevoked", Subject: `user:${userId}`, SubjectEmail: null }),
      expect.objectContaining({ Event: "UserRoleGranted", Subject: `user:${userId}` }),
      expect.objectContaining({ Event: "UserPasswordLinkIssued", Subject: `user:${userId}` }),
    ]);
    // A domain added from the dashboard is the signed-in person's doing in the domain's history.
    const history = (await acmeAdmin.get("history?domain=example.org")).json.records as {
      CausedBy: string;
    }[];
    expect(history[0]!.CausedBy).toBe(`user:${me.id}`);
    expect((await acmeAdmin.put("remove_user", { user_id: me.id })).json.code).toBe("last_admin");
  });

  it("documents the dashboard's endpoints in the OpenAPI document, and their answers satisfy it", async () => {
    const doc = (await handle.get("openapi.json", acmeKey)).json as {
      components: { schemas: Record<string, object> };
    };
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    for (const [name, schema] of Object.entries(doc.components.schemas))
      ajv.addSchema(schema, `#/components/schemas/${name}`);
    for (const path of ["session", "users", "api_keys", "activity", `inputs?${period}`]) {
      const answer = await acmeAdmin.get(path);
      const check = ajv.getSchema(`#/components/schemas/Response_${path.split("?")[0]}`)!;
      expect(check(answer.json), `${path}: ${JSON.stringify(check.errors)}`).toBe(true);
    }
  });

  it("signs out this session, or every session of the person", async () => {
    const second = new DashboardSession(handle.service.apiRoot);
    await second.signIn("admin@other.example", passwords.otherAdmin);
    const third = new DashboardSession(handle.service.apiRoot);
    await third.signIn("admin@other.example", passwords.otherAdmin);
    const out = await second.put("sign_out", {});
    expect(out.status).toBe(200);
    expect(out.headers.get("set-cookie")).toMatch(/^dl_session=;.*expires=Thu, 01 Jan 1970/i);
    expect((await second.get("session")).status).toBe(401);
    expect((await third.get("session")).status).toBe(200);
    expect((await third.put("sign_out", { everywhere: "true" })).status).toBe(200);
    expect((await otherAdmin.get("session")).status).toBe(401);
    expect((await third.get("session")).status).toBe(401);
  });

  it("never writes a password, a session id or a link's token to the log", () => {
    expect(logLines.length).toBeGreaterThan(50);
    const all = logLines.join("\n");
    for (const secret of secrets) expect(all).not.toContain(secret);
  });
});
