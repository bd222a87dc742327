import type { AddressInfo } from "node:net";
import { apiConfigFromEnv, createApiApp } from "@dmarc-ledger/api";
import { catchUp } from "@dmarc-ledger/projection-engine";
import { sharedRateLimiter } from "@dmarc-ledger/rate-limits";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { createTenant } from "@dmarc-ledger/tenancy";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Backend, postgresBackend } from "../support/service-harness.js";

/** An API app on the runtime's real database, with its own configuration, on a free port. */
async function listen(
  runtime: Runtime,
  env: NodeJS.ProcessEnv,
  logged: unknown[] = [],
  limits: "process" | "shared" = "process",
) {
  const logger = pino({ level: "error" }, { write: (line: string) => logged.push(JSON.parse(line)) });
  const config = apiConfigFromEnv(env, 0);
  const app = createApiApp({
    db: runtime.db,
    store: runtime.store,
    projections: allProjections,
    config,
    logger,
    ...(limits === "shared" ? { rateLimiter: sharedRateLimiter(runtime.db, config.rateLimit) } : {}),
  });
  const server = app.listen(0);
  await new Promise((resolve) => server.once("listening", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/`;
  return {
    get: (path: string, key: string) => fetch(base + path, { headers: { Authorization: `Bearer ${key}` } }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe("rate limits and internal failures", () => {
  let backend: Backend;
  let runtime: Runtime;
  let key: string;

  beforeAll(async () => {
    backend = await postgresBackend();
    runtime = await openRuntime(backend.env);
    key = (await createTenant(runtime.store, { name: "limits", region: "global" }, { causedBy: "test" }))
      .apiKey;
    await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
  });
  afterAll(async () => {
    await runtime?.close();
    await backend?.cleanup();
  });

  it("answers 429 with Retry-After once a key's burst is spent, and advertises the limit on every answer", async () => {
    const api = await listen(runtime, { RATE_LIMIT_PER_SECOND: "1", RATE_LIMIT_BURST: "3" });
    try {
      const answers = [];
      for (let i = 0; i < 5; i++) answers.push(await api.get("aggregate_by_domain", key));
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 429, 429]);
      expect(answers.map((answer) => answer.headers.get("ratelimit-limit"))).toEqual([
        "3",
        "3",
        "3",
        "3",
        "3",
      ]);
      expect(answers.slice(0, 3).map((answer) => answer.headers.get("ratelimit-remaining"))).toEqual([
        "2",
        "1",
        "0",
      ]);
      const limited = answers[3]!;
      expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(await limited.json()).toMatchObject({ status: "ERROR", code: "rate_limited" });
      // Another key has its own bucket; requests without a valid key are limited per address.
      const other = await createTenant(
        runtime.store,
        { name: "other", region: "global" },
        { causedBy: "test" },
      );
      await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
      expect((await api.get("aggregate_by_domain", other.apiKey)).status).toBe(200);
    } finally {
      await api.close();
    }
  });

  it("holds one limit for a key across API processes that share the database", async () => {
    // Two API apps, each with its own connections, as two processes would have.
    const other = await openRuntime(backend.env);
    // A window of 30 s: long enough that a loaded machine's requests all fall in it.
    const limits = { RATE_LIMIT_PER_SECOND: "1", RATE_LIMIT_BURST: "30" };
    const first = await listen(runtime, limits, [], "shared");
    const second = await listen(other, limits, [], "shared");
    try {
      const { apiKey } = await createTenant(
        runtime.store,
        { name: "spread", region: "global" },
        { causedBy: "test" },
      );
      await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
      const statuses: number[] = [];
      for (let i = 0; i < 60; i++) {
        const api = i % 2 === 0 ? first : second;
        statuses.push((await api.get("aggregate_by_domain", apiKey)).status);
      }
      // Per process, each would have allowed 30 (all 60); shared, the key gets 30.
      expect(statuses.slice(0, 30)).toEqual(Array(30).fill(200));
      expect(statuses.slice(30)).toEqual(Array(30).fill(429));
    } finally {
      await first.close();
      await second.close();
      await other.close();
    }
  });

  it("takes a large allowance from the shared count in slices: about one write per 1%, the limit held", async () => {
    const other = await openRuntime(backend.env);
    // Every query either limiter sends to the real database, counted on its way.
    let queries = 0;
    const counted = (db: Runtime["db"]) =>
      new Proxy(db, {
        get(target, property, receiver) {
          if (property !== "executeQuery") return Reflect.get(target, property, receiver);
          return (query: Parameters<Runtime["db"]["executeQuery"]>[0]) => {
            queries += 1;
            return target.executeQuery(query);
          };
        },
      });
    // 1,000 requests in a window of 100 s; slices of 10.
    const options = { perSecond: 10, burst: 1000 };
    const limiters = [
      sharedRateLimiter(counted(runtime.db), options),
      sharedRateLimiter(counted(other.db), options),
    ];
    try {
      const allowed: boolean[] = [];
      for (let i = 0; i < 1200; i++) allowed.push((await limiters[i % 2]!.consume("key:sliced")).allowed);
      const firstRefused = allowed.indexOf(false);
      const total = allowed.filter(Boolean).length;
      // Within one slice below the allowance, and one slice per process above it.
      expect(firstRefused).toBeGreaterThanOrEqual(1000 - 10);
      expect(total).toBeGreaterThanOrEqual(1000 - 10);
      expect(total).toBeLessThanOrEqual(1000 + 2 * 10);
      // One upsert per request would be 1,200 queries.
      expect(queries).toBeLessThan(200);
      // 200 requests of a new caller at once share the slices: none is refused.
      const together = await Promise.all(
        Array.from({ length: 200 }, (_, i) => limiters[i % 2]!.consume("key:together")),
      );
      expect(together.filter((decision) => !decision.allowed)).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it("answers 500 with a request id and no stack when the database is gone, and logs the cause", async () => {
    const broken = await openRuntime(backend.env);
    const logged: { err?: { stack?: string }; requestId?: string }[] = [];
    const api = await listen(broken, {}, logged);
    try {
      await broken.close();
      const answer = await api.get("aggregate_by_domain", key);
      expect(answer.status).toBe(500);
      const body = (await answer.json()) as { status: string; code: string; message: string };
      const requestId = answer.headers.get("x-request-id")!;
      expect(body).toEqual({
        status: "ERROR",
        code: "internal_error",
        message: `Something went wrong on our side. Quote request id ${requestId} when you report it.`,
      });
      expect(JSON.stringify(body)).not.toMatch(/at .*\.(ts|js)|pool|pg/i);
      expect(logged.some((entry) => entry.requestId === requestId && entry.err?.stack)).toBe(true);
    } finally {
      await api.close();
    }
  });
});
