import { once } from "node:events";
import { createServer as createHttpServer, request } from "node:http";
import { type AddressInfo, connect, createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  addressKey,
  type ConnectionLimits,
  limitConnections,
  limitHttpConnections,
} from "../src/connection-limits.js";

/** Every 127.x.y.z is this machine on Linux: each stands for a client address of its own. */
const clientA = "127.0.0.1";
const clientB = "127.0.0.2";
const grace = 200;

const servers: Server[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function listening<T extends Server>(server: T): Promise<number> {
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return (server.address() as AddressInfo).port;
}

/** A client connection from `localAddress` that stays open, saying nothing; `closed` resolves when the server ends it. */
async function openFrom(port: number, localAddress: string) {
  const socket = connect({ port, host: "127.0.0.1", localAddress });
  sockets.push(socket);
  socket.on("error", () => {});
  const closed = once(socket, "close").then(() => true);
  await once(socket, "connect");
  return { socket, closed };
}

/** Whether the server closed the connection within `ms` (it never does on its own here). */
const closedWithin = (connection: { closed: Promise<boolean> }, ms: number) =>
  Promise.race([connection.closed, new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);

async function limitedServer(limits: ConnectionLimits) {
  const server = createServer();
  const limiter = limitConnections(server, limits);
  const port = await listening(server);
  /** The server has seen `count` connections from `address` (accepting is asynchronous). */
  const seen = async (address: string, count: number) => {
    for (let i = 0; i < 200 && limiter.open(address) !== count; i++)
      await new Promise((r) => setTimeout(r, 5));
    expect(limiter.open(address)).toBe(count);
  };
  return { port, limiter, seen };
}

describe("connections per address and in all", () => {
  it("past its limit, an address's new connection is closed while the others are within their grace", async () => {
    const { port, limiter, seen } = await limitedServer({ total: 100, perAddress: 3, graceMs: 60_000 });
    const held = [];
    for (let i = 0; i < 3; i++) held.push(await openFrom(port, clientA));
    await seen(clientA, 3);
    const fourth = await openFrom(port, clientA);
    expect(await closedWithin(fourth, 2_000)).toBe(true);
    for (const connection of held) expect(await closedWithin(connection, 50)).toBe(false);
    expect(limiter.counts).toEqual({ refused: 1, evicted: 0 });
    // Another address is not counted against this one.
    await openFrom(port, clientB);
    await seen(clientB, 1);
    expect(limiter.open()).toBe(4);
  });

  it("a new connection takes the place of the one that has waited longest, once it has waited its grace", async () => {
    const { port, limiter, seen } = await limitedServer({ total: 100, perAddress: 3, graceMs: grace });
    const held = [];
    for (let i = 0; i < 3; i++) held.push(await openFrom(port, clientA));
    await seen(clientA, 3);
    await new Promise((resolve) => setTimeout(resolve, grace + 50));
    const probe = await openFrom(port, clientA);
    expect(await closedWithin(held[0]!, 2_000)).toBe(true);
    expect(await closedWithin(probe, 50)).toBe(false);
    expect(await closedWithin(held[1]!, 0)).toBe(false);
    expect(limiter.counts).toEqual({ refused: 0, evicted: 1 });
    await seen(clientA, 3);
  });

  it("at the total, a newcomer from another address takes the place of the longest waiting", async () => {
    const { port, limiter, seen } = await limitedServer({ total: 4, perAddress: 4, graceMs: grace });
    const held = [];
    for (let i = 0; i < 4; i++) held.push(await openFrom(port, clientA));
    await seen(clientA, 4);
    // Within the grace: refused.
    const early = await openFrom(port, clientB);
    expect(await closedWithin(early, 2_000)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, grace + 50));
    const newcomer = await openFrom(port, clientB);
    expect(await closedWithin(held[0]!, 2_000)).toBe(true);
    expect(await closedWithin(newcomer, 50)).toBe(false);
    await seen(clientB, 1);
    expect(limiter.open()).toBe(4);
    expect(limiter.counts).toEqual({ refused: 1, evicted: 1 });
  });

  it("a connection with a request in flight keeps its place past its grace", async () => {
    let answer: () => void = () => {};
    const server = createHttpServer((_request, response) => {
      answer = () => response.end("done");
    });
    const limiter = limitHttpConnections(server, { total: 100, perAddress: 1, graceMs: grace });
    const port = await listening(server);
    const asking = request({ port, host: "127.0.0.1", localAddress: clientA, agent: false, path: "/" });
    const answered = new Promise<string>((resolve, reject) => {
      asking.on("response", (response) => {
        let body = "";
        response.on("data", (chunk) => {
          body += chunk;
        });
        response.on("end", () => resolve(body));
      });
      asking.on("error", reject);
    });
    asking.end();
    for (let i = 0; i < 200 && limiter.open(clientA) !== 1; i++) await new Promise((r) => setTimeout(r, 5));
    await new Promise((resolve) => setTimeout(resolve, grace + 50));
    const second = await openFrom(port, clientA);
    expect(await closedWithin(second, 2_000)).toBe(true);
    answer();
    expect(await answered).toBe("done");
    expect(limiter.counts).toEqual({ refused: 1, evicted: 0 });
  });

  it("counts IPv4 as it is (mapped into IPv6 too) and IPv6 by its /64", () => {
    expect(addressKey("192.0.2.7")).toBe("192.0.2.7");
    expect(addressKey("::ffff:192.0.2.7")).toBe("192.0.2.7");
    expect(addressKey("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(addressKey("2001:db8:1:2:ffff:ffff:ffff:ffff")).toBe("2001:db8:1:2::/64");
    expect(addressKey("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64");
  });
});
