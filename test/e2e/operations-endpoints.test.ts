import { type AddressInfo, createServer, type Server, type Socket } from "node:net";

import { apiConfigFromEnv, createApiApp } from "@dmarc-ledger/api";
import { sha256Hex } from "@dmarc-ledger/events";
import { createLogger } from "@dmarc-ledger/process";
import { catchUp } from "@dmarc-ledger/projection-engine";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { createTenant } from "@dmarc-ledger/tenancy";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { capturingLogger } from "../support/capturing-logger.js";
import {
  type Backend,
  pgliteBackend,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";
import { startBuiltProcess, waitFor } from "../support/start-built-process.js";

describe("health, readiness, metrics, the access log and the public OpenAPI document", () => {
  let backend: Backend;
  let handle: ServiceHandle;
  let key: string;
  let origin: string;
  const logLines: string[] = [];

  beforeAll(async () => {
    backend = await pgliteBackend();
    handle = await startTestService(backend.env, capturingLogger(logLines));
    origin = new URL(handle.service.apiRoot).origin;
    key = (await createTenant(handle.runtime.store, { name: "ops", region: "global" }, { causedBy: "test" }))
      .apiKey;
    await catchUp({ store: handle.runtime.store, db: handle.runtime.db, projections: allProjections });
  });
  afterAll(async () => {
    await handle?.stop();
    await backend?.cleanup();
  });

  it("answers /healthz and /readyz without a key", async () => {
    const health = await fetch(`${origin}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });
    const ready = await fetch(`${origin}/readyz`);
    expect(ready.status).toBe(200);
    // No report yet: no lookup made.
    expect(await ready.json()).toEqual({
      status: "ready",
      reverseDns: { status: "idle", answered: 0, failed: 0, windowSeconds: 3600 },
    });
  });

  it("serves Prometheus metrics: requests by route and status, projection lag, appends, Safe SPF, process", async () => {
    expect((await handle.get("domains", key)).status).toBe(200);
    expect((await handle.put("add-domain", key, { domain: "example.com" })).status).toBe(200);
    const response = await fetch(`${origin}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/plain");
    const text = await response.text();
    expect(text).toMatch(
      /http_request_duration_seconds_count\{method="GET",route="\/api\/domains",status="200"\} 1/,
    );
    expect(text).toMatch(
      /http_request_duration_seconds_bucket\{le="0\.1",method="PUT",route="\/api\/add-domain",status="200"\}/,
    );
    expect(text).toMatch(/projection_lag_events\{projection="domains"\} 0/);
    expect(text).toMatch(/projection_lag_seconds\{projection="domains"\} 0/);
    // The add-domain above went through the service's store: one event on the domain's stream.
    expect(text).toMatch(/eventstore_events_appended_total\{category="domain"\} [1-9]/);
    expect(text).toMatch(/safe_spf_domains\{status="pending"\} 0/);
    expect(text).toMatch(/process_cpu_seconds_total \d/);
    expect(text).toMatch(/nodejs_heap_size_used_bytes \d/);
  });

  it("stores an upload's events and its archive row in one commit, and counts it and its events", async () => {
    const xml =
      '<?xml version="1.0"?><feedback><report_metadata><org_name>ops.example</org_name>' +
      "<email>r@ops.example</email><report_id>ops-upload-1</report_id><date_range><begin>1700000000</begin>" +
      "<end>1700086399</end></date_range></report_metadata><policy_published><domain>example.com</domain>" +
      "<p>none</p></policy_published><record><row><source_ip>192.0.2.1</source_ip><count>3</count>" +
      "<policy_evaluated><disposition>none</disposition><dkim>pass</dkim><spf>pass</spf></policy_evaluated>" +
      "</row><identifiers><header_from>example.com</header_from></identifiers><auth_results><spf>" +
      "<domain>example.com</domain><result>pass</result></spf></auth_results></record></feedback>";
    const upload = await fetch(`${handle.service.apiRoot}reports`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/xml" },
      body: xml,
    });
    expect(upload.status).toBe(202);
    // One transaction wrote both: the archive row's xmin is the events' transaction. Through the
    // archive-first path, three transactions would have written them.
    const { rows } = await sql<{ archived: string; events: string }>`
      select (select xmin::text from raw_input where sha256 = ${sha256Hex(Buffer.from(xml))}) as archived,
        (select transaction_id::text from events where type = 'AggregateReportReceived'
          and data::json->>'reportId' = 'ops-upload-1') as events`.execute(handle.runtime.db);
    expect(rows[0]!.events).toMatch(/^\d+$/);
    expect(rows[0]!.archived).toBe(rows[0]!.events);
    const text = await (await fetch(`${origin}/metrics`)).text();
    expect(text).toMatch(/eventstore_events_appended_total\{category="aggregate-report"\} 1\b/);
    expect(text).toMatch(/^intake_inputs_total\{channel="upload",status="stored"\} 1$/m);
  });

  it("logs one JSON line per request with its id, tenant, route, status and duration, and never a key", async () => {
    const answer = await fetch(`${handle.service.apiRoot}domains?page=1`, {
      headers: { Authorization: `Bearer ${key}`, "X-Request-Id": "ops-test-request-1" },
    });
    expect(answer.status).toBe(200);
    await fetch(`${handle.service.apiRoot}domains`, {
      headers: { Authorization: "Bearer dlk_global_wrongkey" },
    });
    const entries = logLines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const mine = entries.filter((entry) => entry.requestId === "ops-test-request-1");
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ msg: "request", route: "/api/domains", status: 200, method: "GET" });
    expect(mine[0]!.tenantId).toMatch(/^[0-9a-f-]{36}$/);
    expect(typeof mine[0]!.durationMs).toBe("number");
    const refused = entries.filter((entry) => entry.msg === "request" && entry.status === 401);
    expect(refused.length).toBeGreaterThan(0);
    const all = logLines.join("\n");
    expect(all).not.toContain(key);
    expect(all).not.toContain("dlk_global_wrongkey");
  });

  it("serves the OpenAPI document without a key, each operation listing only the errors it can give", async () => {
    const response = await fetch(`${handle.service.apiRoot}openapi.json`);
    expect(response.status).toBe(200);
    const doc = (await response.json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const statuses = (path: string, method: string) =>
      Object.keys(doc.paths[path]![method]!.responses).sort();
    expect(statuses("/domains", "get")).toEqual(["200", "400", "401", "403", "421", "429", "500"]);
    expect(statuses("/add-domain", "put")).toEqual([
      "200",
      "400",
      "401",
      "403",
      "409",
      "413",
      "415",
      "421",
      "429",
      "500",
    ]);
    expect(statuses("/update_safe_spf", "put")).toContain("422");
    expect(statuses("/safe_spf", "get")).toContain("404");
    // 404: the optional domain filter names a domain that is not the caller's.
    expect(statuses("/aggregate_by_domain", "get")).toContain("404");
    expect(statuses("/aggregate_by_domain", "get")).not.toContain("409");
    // Signing in needs no key: no 403 or 421; 401 is a wrong password, 429 too many of them.
    expect(statuses("/sign_in", "put")).toEqual(["200", "400", "401", "413", "415", "429", "500"]);
    expect(statuses("/readyz", "get")).toEqual(["200", "503"]);
  });
});

describe("readiness follows the projections", () => {
  let backend: Backend;
  let runtime: Runtime;

  beforeAll(async () => {
    backend = await pgliteBackend();
    runtime = await openRuntime(backend.env);
  });
  afterAll(async () => {
    await runtime?.close();
    await backend?.cleanup();
  });

  it("answers 503 with the reason while projections are more than READY_MAX_LAG events behind", async () => {
    // No projector runs here: what is appended stays unapplied until catchUp.
    const app = createApiApp({
      db: runtime.db,
      store: runtime.store,
      projections: allProjections,
      config: apiConfigFromEnv({ READY_MAX_LAG: "1" }, 0),
      logger: createLogger({ LOG_LEVEL: "silent", LOG_FORMAT: "json" }, "test"),
    });
    const server = app.listen(0);
    await new Promise((resolve) => server.once("listening", resolve));
    const readyz = `http://127.0.0.1:${(server.address() as { port: number }).port}/readyz`;
    try {
      await createTenant(runtime.store, { name: "one", region: "global" }, { causedBy: "test" });
      await createTenant(runtime.store, { name: "two", region: "global" }, { causedBy: "test" });
      const behind = await fetch(readyz);
      expect(behind.status).toBe(503);
      const body = (await behind.json()) as { status: string; reason: string };
      expect(body.status).toBe("not_ready");
      expect(body.reason).toContain("READY_MAX_LAG=1");
      expect(body.reason).toContain("tenants");
      await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
      expect((await fetch(readyz)).status).toBe(200);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("/metrics while the service starts", () => {
  // A "PostgreSQL" that takes the connection and never answers: the process stays in its start,
  // port bound, for as long as the test wants.
  let silent: Server;
  let url: string;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    silent = createServer((socket) => {
      sockets.push(socket);
      socket.on("error", () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    url = `postgres://postgres@127.0.0.1:${(silent.address() as AddressInfo).port}/never`;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  for (const [name, entry, args] of [
    ["start", "apps/cli/dist/main.js", ["start"]],
    ["the standalone API", "apps/api/dist/main.js", []],
  ] as const) {
    it(`answers with the process metrics while ${name} is not ready`, { timeout: 60_000 }, async () => {
      const port = await freePort();
      const started = await startBuiltProcess(entry, { DATABASE_URL: url, PORT: String(port) }, [...args]);
      try {
        const origin = `http://127.0.0.1:${port}`;
        await waitFor(
          () =>
            fetch(`${origin}/healthz`).then(
              (response) => (response.ok ? true : undefined),
              () => undefined,
            ),
          `${name}'s port`,
        );
        const metrics = await fetch(`${origin}/metrics`);
        expect(metrics.status).toBe(200);
        expect(metrics.headers.get("content-type")).toContain("text/plain");
        expect(await metrics.text()).toMatch(/^process_resident_memory_bytes \d+/m);
        // Still starting after that answer: readiness is /readyz's to say.
        const ready = await fetch(`${origin}/readyz`);
        expect(ready.status).toBe(503);
        expect(await ready.json()).toEqual({ status: "not_ready", reason: "the service is starting" });
      } finally {
        started.child.kill("SIGKILL");
        await started.exited;
      }
    });
  }
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
