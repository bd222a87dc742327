import { type ChildProcess, spawn } from "node:child_process";
import { request } from "node:http";
import { connect, type Socket } from "node:net";
import { type BoundServer, bindPort } from "@dmarc-ledger/api";
import { type RunningService, startService } from "@dmarc-ledger/cli";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Backend, cli, postgresBackend } from "../support/service-harness.js";

/**
 * Issue 21, point 4: 1,000 slow connections from one address, reopened as they were closed, left
 * 0 of 120 health probes answered; the 10 s header timeout cut connections only at 31 s.
 * Every 127.x.y.z is this machine on Linux: 127.0.0.1 is the attacker, 127.0.0.2 everyone else.
 */
const attacker = "127.0.0.1";
const other = "127.0.0.2";

/** A GET from `localAddress`, on a connection of its own. */
function get(port: number, path: string, localAddress: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const asking = request(
      { host: "127.0.0.1", port, path, localAddress, headers, agent: false },
      (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          body += chunk;
        });
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    asking.on("error", reject);
    asking.end();
  });
}

/**
 * In a process of its own, as an attacker would be: `count` connections from 127.0.0.1, each
 * sending the start of a request and never its end, each opened again 100 ms after it is closed
 * (sooner would only spin the machine's two cores). Prints its attempts every 100 ms.
 */
const attackScript = `
const net = require("node:net");
const port = Number(process.argv[1]);
const count = Number(process.argv[2]);
let attempts = 0;
let stopped = false;
const open = () => {
  if (stopped) return;
  attempts++;
  const socket = net.connect({ port, host: "127.0.0.1", localAddress: "127.0.0.1" });
  socket.on("connect", () => socket.write("GET /api/ HTTP/1.1\\r\\nHost: attacker\\r\\n"));
  socket.on("error", () => {});
  socket.on("close", () => setTimeout(open, 100));
};
for (let i = 0; i < count; i++) open();
const report = setInterval(() => process.stdout.write(JSON.stringify({ attempts }) + "\\n"), 100);
process.stdin.on("data", () => {
  stopped = true;
  clearInterval(report);
  process.exit(0);
});
`;

function startAttack(port: number, count: number) {
  const child: ChildProcess = spawn(process.execPath, ["-e", attackScript, String(port), String(count)], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  let attempts = 0;
  child.stdout!.setEncoding("utf8");
  child.stdout!.on("data", (text: string) => {
    for (const line of text.trim().split("\n")) attempts = Math.max(attempts, JSON.parse(line).attempts);
  });
  return {
    attempts: () => attempts,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.stdin!.write("stop\n");
      }),
  };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A connection from `localAddress` that sends the start of a request and holds it. */
function slowConnection(
  port: number,
  localAddress: string,
): Promise<{ socket: Socket; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port, localAddress }, () => {
      socket.write("GET /api/ HTTP/1.1\r\nHost: slow\r\n");
      resolve({ socket, closed: new Promise((done) => socket.once("close", () => done())) });
    });
    socket.on("error", () => {});
    socket.once("close", () => reject(new Error("closed before connecting")));
  });
}

describe("one client cannot take every connection of the API", () => {
  let backend: Backend;
  let runtime: Runtime;
  let bound: BoundServer;
  let service: RunningService;
  let key: string;

  beforeAll(async () => {
    backend = await postgresBackend();
    key = JSON.parse((await cli(backend.env, "tenant", "create", "acme", "--json")).out).apiKey;
    runtime = await openRuntime(backend.env);
    // The limits `start` uses: 1,000 connections, 100 per address (MAX_CONNECTIONS_PER_IP's default).
    bound = await bindPort(0);
    service = await startService({
      runtime,
      env: { ...backend.env, SMTP_PORT: "0", DNS_PORT: "0" },
      port: bound.port,
      server: bound,
      logger: pino({ level: "silent" }),
      bootstrapTenant: false,
    });
  });
  afterAll(async () => {
    await service?.stop();
    await runtime?.close();
    await backend?.cleanup();
  });

  it("1,000 slow connections from one address, reopened as closed: /healthz and other clients are served", async () => {
    const attack = startAttack(bound.port, 1000);
    try {
      // Its 1,000, and as many again reopened after they were closed.
      await until(
        () => attack.attempts() >= 2000 && bound.connections.open(attacker) === 100,
        "the attacker's 2,000 attempts and its 100 places",
      );
      const attemptsBefore = attack.attempts();
      const probes = [];
      for (let i = 0; i < 20; i++) {
        probes.push((await get(bound.port, "/healthz", other)).status);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(probes).toEqual(Array(20).fill(200));
      for (const path of ["/readyz", "/metrics"]) {
        expect((await get(bound.port, path, other)).status, path).toBe(200);
      }
      const domains = await get(bound.port, "/api/domains", other, { Authorization: `Bearer ${key}` });
      expect(domains).toEqual({ status: 200, body: expect.stringContaining('"status":"SUCCESS"') });
      // All the while the attacker went on, and never held more than its share.
      expect(attack.attempts()).toBeGreaterThan(attemptsBefore);
      expect(bound.connections.open(attacker)).toBeLessThanOrEqual(100);
      expect(bound.connections.counts.refused).toBeGreaterThan(1000);
    } finally {
      await attack.stop();
    }
  });

  it("a probe from the address holding its 100 slow connections takes the place of one that waited", async () => {
    const held = [];
    for (let i = 0; i < 100; i++) held.push(await slowConnection(bound.port, attacker));
    await until(() => bound.connections.open(attacker) === 100, "100 slow connections");
    // Past the grace (1 s) a connection gets to send its request.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(await get(bound.port, "/healthz", attacker)).toMatchObject({ status: 200 });
    // The one pushed out was the longest waiting: the first.
    await held[0]!.closed;
    for (const { socket } of held) socket.destroy();
  });
});

describe("the API's header timeout holds at its setting", () => {
  it("a client that sends its headers a byte at a time is answered 408 and cut off near 2 s, not 31", async () => {
    const server = await bindPort(0, "127.0.0.1", { headersTimeoutMs: 2_000 });
    server.serve((_request, response) => response.end("ok"));
    try {
      const started = performance.now();
      const socket = connect({ host: "127.0.0.1", port: server.port });
      let answer = "";
      socket.setEncoding("utf8");
      socket.on("data", (chunk: string) => {
        answer += chunk;
      });
      socket.on("error", () => {});
      socket.write("GET / HTTP/1.1\r\nHost: slow\r\n");
      const dribble = setInterval(() => socket.write("X"), 200);
      // One that sends nothing at all; read, so that its end is seen.
      const silent = connect({ host: "127.0.0.1", port: server.port });
      silent.on("error", () => {});
      silent.resume();
      const silentClosed = new Promise<number>((resolve) =>
        silent.once("close", () => resolve(performance.now() - started)),
      );
      const closedAfter = await new Promise<number>((resolve) =>
        socket.once("close", () => resolve(performance.now() - started)),
      );
      clearInterval(dribble);
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      // Not before its setting; within a second or so of it (checked every second), not at 31 s.
      expect(closedAfter).toBeGreaterThanOrEqual(1_900);
      expect(closedAfter).toBeLessThan(5_000);
      const silentAfter = await silentClosed;
      expect(silentAfter).toBeGreaterThanOrEqual(1_900);
      expect(silentAfter).toBeLessThan(5_000);
    } finally {
      await server.close(0);
    }
  });
});
