import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { connect, createServer } from "node:net";
import { pino } from "pino";
import { Counter, Gauge, Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningMetricsServer, startMetricsServer } from "../src/metrics-server.js";

describe("the metrics server of a process without an API", () => {
  const registry = new Registry();
  const counter = new Counter({ name: "test_things_total", help: "things", registers: [registry] });
  let failing = false;
  new Gauge({
    name: "test_gauge",
    help: "a gauge whose collector can fail",
    registers: [registry],
    collect() {
      if (failing) throw new Error("the database is down at postgres://user:secret@db");
      this.set(7);
    },
  });
  const logged: string[] = [];
  const logger = pino(
    { level: "info" },
    {
      write: (line: string) => {
        logged.push(line);
      },
    },
  );
  let server: RunningMetricsServer;
  let base: string;

  beforeAll(async () => {
    server = await startMetricsServer(registry, { host: "127.0.0.1", port: 0 }, logger);
    base = `http://127.0.0.1:${server.port}`;
  });
  afterAll(() => server?.stop());

  it("serves the registry in Prometheus's text format at GET /metrics, and says it is alive", async () => {
    counter.inc(3);
    const response = await fetch(`${base}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/plain");
    const text = await response.text();
    expect(text).toMatch(/^test_things_total 3$/m);
    expect(text).toMatch(/^test_gauge 7$/m);
    const health = await fetch(`${base}/healthz`);
    expect(await health.json()).toEqual({ status: "ok" });
    expect(logged.some((line) => JSON.parse(line).msg === "metrics listening")).toBe(true);
  });

  it("answers 404 elsewhere and 405 to another method", async () => {
    expect((await fetch(`${base}/api/domains`)).status).toBe(404);
    const post = await fetch(`${base}/metrics`, { method: "POST", body: "x" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
  });

  it("answers 400 to a request target that is no URL, and goes on serving", async () => {
    const socket = connect(server.port, "127.0.0.1");
    await once(socket, "connect");
    socket.end("GET http://[ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    let answer = "";
    for await (const chunk of socket) answer += chunk;
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it("answers 500 when a collector fails, logging why and telling the scraper nothing more", async () => {
    failing = true;
    try {
      const response = await fetch(`${base}/metrics`);
      expect(response.status).toBe(500);
      expect(await response.text()).toBe("collecting metrics failed\n");
    } finally {
      failing = false;
    }
    expect(logged.some((line) => line.includes("collecting metrics failed"))).toBe(true);
  });

  it("takes 16 connections, 4 from one address: a client holding many leaves the scraper served", async () => {
    const held = [];
    for (let i = 0; i < 16; i++) {
      const socket = connect({ port: server.port, host: "127.0.0.1", localAddress: "127.0.0.3" });
      socket.on("error", () => {});
      socket.resume();
      held.push({ socket, closed: once(socket, "close") });
      await once(socket, "connect");
    }
    // The 12 past the four were closed at once (the four have not waited the second's grace).
    const closed = await Promise.all(
      held.map(({ closed }) =>
        Promise.race([
          closed.then(() => true),
          new Promise((resolve) => setTimeout(() => resolve(false), 500)),
        ]),
      ),
    );
    expect(closed.filter(Boolean)).toHaveLength(12);
    const scraped = await fetch(`${base}/metrics`);
    expect(scraped.status).toBe(200);
    for (const { socket } of held) socket.destroy();
  });

  it("refuses to start on a port that is taken", async () => {
    const taken = createServer().listen(0, "127.0.0.1");
    await once(taken, "listening");
    try {
      const port = (taken.address() as AddressInfo).port;
      await expect(startMetricsServer(registry, { host: "127.0.0.1", port }, logger)).rejects.toThrow(
        /EADDRINUSE/,
      );
    } finally {
      taken.close();
    }
  });
});
