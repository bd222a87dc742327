/**
 * Issue 40, point 7: every bad input is a clear 4xx. For every operation of the OpenAPI document
 * the service serves (GET /api/openapi.json), each query parameter and each body field in turn
 * gets hostile values (a NUL byte, overlong, the wrong type, odd Unicode, negative and huge
 * numbers) while the others hold plausible ones; no answer may be a 5xx. The slowest answer is
 * printed, and one above 3 s fails the test: a guard against a request that hangs, not a measure
 * of speed (that is `pnpm bench`'s).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addPerson, DashboardSession } from "../support/dashboard-session.js";
import {
  type Backend,
  backends,
  cli,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";

interface Operation {
  method: string;
  path: string;
  query: string[];
  fields: string[];
}

const overlong = "a".repeat(5_000);
/** Values for a query parameter, written into the URL as they are (already percent-encoded). */
const hostileQueryValues = [
  "%00",
  `x%00y`,
  overlong,
  "-1",
  "99999999999999999999999999",
  "1e308",
  "NaN",
  "%ED%A0%80", // a UTF-16 surrogate encoded as UTF-8: no character
  "%FF%FE",
  encodeURIComponent("\u202e\u200b\ufeffé\u0301👩‍👩‍👧"),
  "",
];
/** Values for a body field, sent as JSON (typed) and, for the texts, as form fields. */
const hostileBodyValues: unknown[] = [
  "\u0000",
  "x\u0000y",
  overlong,
  "\ud800",
  "\u202e\u200b\ufeffé\u0301👩‍👩‍👧",
  "-1",
  "99999999999999999999999999",
  -1,
  1e308,
  true,
  null,
  [],
  ["a", "b"],
  { nested: "\u0000" },
  "",
];

describe.each(backends)("the API under hostile input (%s)", (_name, makeBackend) => {
  let backend: Backend;
  let service: ServiceHandle;
  let admin: DashboardSession;
  let apiRoot: string;
  /** Plausible values of each parameter by name, for the parameters not under test. */
  const plausible: Record<string, string> = {
    domain: "ikea.com",
    start: "0",
    end: "2000000000",
    page: "1",
    per_page: "10",
    bucket: "day",
    group: "fuzzers",
    policy: "reject",
    status: "stored",
    rule: "new_sender",
    webhook_id: "unknown",
    delivery_id: "unknown",
    user_id: "unknown",
    role: "viewer",
    email: "fuzz.viewer@example.org",
    password: "a long enough password",
    token: "unknown",
    key_id: "unknown",
    scopes: "read",
    sha256: "0".repeat(64),
    alert_types: "new_sender",
    description: "fuzz",
    enabled: "true",
    params: "{}",
    service: "Google",
    range: "192.0.2.0/24",
    approved: "true",
    original: "v=spf1 include:_spf.google.com -all",
    failure_report_days: "90",
    raw_input_days: "90",
    aggregate_days: "keep",
    redaction: "on",
    everywhere: "false",
    url: "https://hooks.slack.com/services/T000/B000/XXXX",
    // Never the tenant's id: DELETE personal_data would erase it.
    confirm: "not-the-tenant",
  };

  beforeAll(async () => {
    backend = await makeBackend();
    const env = { ...backend.env, RATE_LIMIT_PER_SECOND: "100000", RATE_LIMIT_BURST: "100000" };
    service = await startTestService(env);
    apiRoot = service.service.apiRoot;
    const created = await cli(env, "tenant", "create", "fuzz", "--json");
    expect(created.code, created.err).toBe(0);
    await addPerson(env, apiRoot, "fuzz", "fuzz.admin@example.org", "admin", "the fuzzing admin's password");
    const viewer = await addPerson(
      env,
      apiRoot,
      "fuzz",
      "fuzz.other@example.org",
      "viewer",
      "a viewer's password",
    );
    plausible.user_id = viewer.userId;
    admin = new DashboardSession(apiRoot);
    expect((await admin.signIn("fuzz.admin@example.org", "the fuzzing admin's password")).status).toBe(200);
    expect((await admin.put("add-domain", { domain: plausible.domain! })).status).toBe(200);
    expect(
      (await admin.put("domain_group", { domain: plausible.domain!, group: plausible.group! })).status,
    ).toBe(200);
  }, 240_000);

  afterAll(async () => {
    await service?.stop();
    await backend?.cleanup();
  });

  async function operations(): Promise<Operation[]> {
    const document = (await (await fetch(new URL("openapi.json", apiRoot))).json()) as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
    };
    const found: Operation[] = [];
    for (const [path, methods] of Object.entries(document.paths)) {
      // /healthz, /readyz and /metrics sit at the origin and take nothing.
      if (!path.startsWith("/") || ["/healthz", "/readyz", "/metrics"].includes(path)) continue;
      for (const [method, operation] of Object.entries(methods)) {
        if (method === "servers") continue;
        const parameters = (operation.parameters ?? []) as { name: string; in: string }[];
        const body = operation.requestBody as
          | { content: Record<string, { schema?: { properties?: Record<string, unknown> } }> }
          | undefined;
        const form = body?.content["application/json"]?.schema?.properties ?? {};
        found.push({
          method: method.toUpperCase(),
          path: path.slice(1),
          query: parameters
            .filter((parameter) => parameter.in === "query")
            .map((parameter) => parameter.name),
          fields: Object.keys(form),
        });
      }
    }
    return found;
  }

  /** Sends one request as the signed-in admin; returns its status and how long it took. */
  async function send(
    operation: Operation,
    query: string,
    body: { json?: unknown; form?: string } = {},
  ): Promise<{ status: number; ms: number; text: string }> {
    const headers: Record<string, string> = { Cookie: admin.cookie!, "X-CSRF-Token": admin.csrfToken! };
    let payload: string | undefined;
    if (body.json !== undefined) {
      headers["Content-Type"] = "application/json";
      payload = JSON.stringify(body.json);
    } else if (body.form !== undefined) {
      headers["Content-Type"] = "application/x-www-form-urlencoded";
      payload = body.form;
    } else if (operation.method === "POST") {
      payload = "\u0000<feedback>\ud800</feedback>";
    }
    const started = performance.now();
    const response = await fetch(`${apiRoot}${operation.path}${query ? `?${query}` : ""}`, {
      method: operation.method,
      headers,
      ...(payload !== undefined ? { body: payload } : {}),
    });
    const text = await response.text();
    return { status: response.status, ms: performance.now() - started, text };
  }

  const plainQuery = (names: string[], except?: string) =>
    names
      .filter((name) => name !== except)
      .map((name) => `${name}=${encodeURIComponent(plausible[name] ?? "x")}`)
      .join("&");
  const plainBody = (fields: string[], except?: string): Record<string, unknown> =>
    Object.fromEntries(
      fields.filter((field) => field !== except).map((field) => [field, plausible[field] ?? "x"]),
    );

  it("refuses by name a body field the endpoint does not have, and the bodies and values that set nothing sensible", async () => {
    const put = async (path: string, json: unknown) => {
      const response = await fetch(`${apiRoot}${path}`, {
        method: "PUT",
        headers: {
          Cookie: admin.cookie!,
          "X-CSRF-Token": admin.csrfToken!,
          "Content-Type": "application/json",
        },
        body: JSON.stringify(json),
      });
      return { status: response.status, json: (await response.json()) as { code: string; message: string } };
    };
    expect(await put("add-domain", { domain: "ikea.com", domian: "ikea.com" })).toEqual({
      status: 400,
      json: {
        status: "ERROR",
        code: "invalid_parameter",
        message: 'Parameter "domian": is not a field of this endpoint.',
      },
    });
    for (const body of [[], {}, [{ redaction: "on" }]]) {
      const answer = await put("update_personal_data_policy", body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.json.code).toBe("invalid_body");
    }
    for (const range of ["0.0.0.0/0", "::/0", "fe80::1%eth0", "10.0.0.0/7"]) {
      const answer = await put("sender_approval", { domain: "ikea.com", range, approved: "true" });
      expect(answer.status, range).toBe(400);
      expect(answer.json.code, range).toBe("invalid_parameter");
    }
    expect(
      (await put("sender_approval", { domain: "ikea.com", range: "192.0.2.0/24", approved: "true" })).status,
    ).toBe(200);
    const portZero = await put("add_webhook", { url: "https://hooks.slack.com:0/services/T000/B000/XXXX" });
    expect(portZero.status).toBe(400);
    expect(portZero.json.message).toContain("port 0");
  });

  it("marks every API answer, errors included, as neither to be stored nor sniffed (point 9)", async () => {
    const answers = [
      await admin.get("aggregate_by_domain?start=0&end=2000000000"),
      await admin.get("domains"),
      await admin.get("aggregate_by_domain?domain=not-ours.example"),
      await admin.get("no_such_endpoint"),
      await admin.put("domain_group", { domain: "ikea.com", group: plausible.group! }),
      await new DashboardSession(apiRoot).get("domains"),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 404, 404, 200, 401]);
    for (const answer of answers) {
      expect(answer.headers.get("cache-control")).toBe("no-store");
      expect(answer.headers.get("x-content-type-options")).toBe("nosniff");
    }
  });

  // Last: it ends with sign_out, and its sign_in attempts throttle the admin's address.
  it("answers no 5xx to any hostile parameter or body field of any operation, and none hangs", {
    timeout: 900_000,
  }, async () => {
    const all = await operations();
    // sign_out last: it ends the session the others use.
    all.sort((a, b) => Number(a.path === "sign_out") - Number(b.path === "sign_out"));
    expect(all.length).toBeGreaterThan(40);
    const failures: string[] = [];
    let sent = 0;
    let slowest = { ms: 0, what: "" };
    const record = (what: string, answer: { status: number; ms: number; text: string }) => {
      sent++;
      if (answer.ms > slowest.ms) slowest = { ms: answer.ms, what };
      if (answer.status >= 500) failures.push(`${what}: ${answer.status} ${answer.text.slice(0, 200)}`);
    };
    for (const operation of all) {
      const label = `${operation.method} ${operation.path}`;
      for (const name of operation.query) {
        for (const value of hostileQueryValues) {
          const query = [plainQuery(operation.query, name), `${name}=${value}`].filter(Boolean).join("&");
          record(
            `${label} ?${name}=${value.slice(0, 30)}`,
            await send(operation, query, plainBodyOf(operation)),
          );
        }
        // The wrong type: the parameter twice (an array), and in brackets.
        const twice = [plainQuery(operation.query, name), `${name}=1&${name}=2`].filter(Boolean).join("&");
        record(`${label} ?${name} twice`, await send(operation, twice, plainBodyOf(operation)));
      }
      for (const field of operation.fields) {
        for (const value of hostileBodyValues) {
          const shown = JSON.stringify(value).slice(0, 30);
          record(
            `${label} JSON ${field}=${shown}`,
            await send(operation, plainQuery(operation.query), {
              json: { ...plainBody(operation.fields, field), [field]: value },
            }),
          );
          if (typeof value === "string") {
            const form = new URLSearchParams(
              Object.entries({ ...plainBody(operation.fields, field), [field]: value }).map(
                ([key, text]) => [key, String(text)] as [string, string],
              ),
            ).toString();
            record(
              `${label} form ${field}=${shown}`,
              await send(operation, plainQuery(operation.query), { form }),
            );
          }
        }
      }
      if (operation.method === "PUT") {
        // The wrong shape of body: an array, a bare value, an unknown field with a NUL.
        for (const json of [[], "text", 12, { ...plainBody(operation.fields), "no_such\u0000field": 1 }])
          record(`${label} body ${JSON.stringify(json).slice(0, 40)}`, await send(operation, "", { json }));
      }
      if (operation.query.length === 0 && operation.fields.length === 0)
        record(`${label} ?unknown=%00`, await send(operation, "unknown=%00"));
    }
    console.log(
      `api fuzz: ${sent} requests over ${all.length} operations; slowest ${slowest.ms.toFixed(0)} ms (${slowest.what})`,
    );
    expect(failures).toEqual([]);
    // A guard against hangs (a request that never ends), not a timing: speed is pnpm bench's.
    expect(slowest.ms, slowest.what).toBeLessThan(3_000);
  });

  /** The plausible body of a PUT operation (for the requests that test its query). */
  function plainBodyOf(operation: Operation): { json?: unknown } {
    return operation.fields.length > 0 ? { json: plainBody(operation.fields) } : {};
  }
});
