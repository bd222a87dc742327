import type { Server as HttpServer } from "node:http";
import type { Server, Socket } from "node:net";
import ipaddr from "ipaddr.js";

export interface ConnectionLimits {
  /** Connections open at once, from every client together. */
  total: number;
  /** Connections open at once from one client address (an IPv6 address counts by its /64). */
  perAddress: number;
  /**
   * How long a connection may wait without a request before a new one may take its place. A client
   * gets this long to send its request, however fast others connect. Default 1,000 ms.
   */
  graceMs?: number;
}

const defaultGraceMs = 1_000;

export interface ConnectionLimiter {
  /** Connections open now: in all, or from the address of `address` (its /64 for IPv6). */
  open(address?: string): number;
  /** A request came in on `socket`: it is busy until `idle`, and no other connection may push it out. */
  busy(socket: Socket): void;
  idle(socket: Socket): void;
  /** Connections closed at accept (every place taken by a busy one), and idle ones closed to make room. */
  readonly counts: { refused: number; evicted: number };
}

/**
 * The address a connection is counted under: IPv4 as it is (also when mapped into IPv6), IPv6 by
 * its /64, the smallest network a host is given (one host holds 2^64 addresses, so counting each
 * one would limit nobody).
 */
export function addressKey(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  if (parsed.kind() === "ipv4") return parsed.toString();
  const prefix = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${prefix.map((part) => part.toString(16)).join(":")}::/64`;
}

/**
 * Holds a server's connections under a total and a per-address limit, at accept (the `connection`
 * event, before a byte is read). A new connection past a limit takes the place of the connection
 * that has waited longest without a request in flight, if that one has waited `graceMs` (of its
 * own address at the per-address limit, of anyone at the total); otherwise the new connection is
 * closed at once. So connections that send nothing, or their headers a byte at a time, hold no
 * place for long against clients that ask: at the total, a newcomer from another address gets in;
 * from the same address as slow connections held open, so does a health probe. Against a client
 * that reconnects as fast as it is cut off, a probe from its own address competes with it for the
 * places that come free: it may be refused (probe from another address).
 *
 * Without `busy` calls (a server that is not HTTP), every connection counts as waiting.
 */
export function limitConnections(server: Server, limits: ConnectionLimits): ConnectionLimiter {
  // Sets keep insertion order: a connection moves to the end when a request of it ends, so the
  // first one not busy is the one that has waited longest.
  const all = new Set<Socket>();
  const byAddress = new Map<string, Set<Socket>>();
  const keyOf = new Map<Socket, string>();
  const requests = new Map<Socket, number>();
  /** Since when each connection has waited: its accept, or the end of its last request. */
  const waitingSince = new Map<Socket, number>();
  const graceMs = limits.graceMs ?? defaultGraceMs;
  const counts = { refused: 0, evicted: 0 };

  const forget = (socket: Socket) => {
    const key = keyOf.get(socket);
    if (key === undefined) return;
    keyOf.delete(socket);
    all.delete(socket);
    requests.delete(socket);
    waitingSince.delete(socket);
    const ofAddress = byAddress.get(key);
    ofAddress?.delete(socket);
    if (ofAddress?.size === 0) byAddress.delete(key);
  };
  /** The connection that has waited longest, if it has waited its grace; sets are in waiting order. */
  const longestWaiting = (sockets: Set<Socket>, now: number): Socket | null => {
    for (const socket of sockets) {
      if (requests.has(socket)) continue;
      return (waitingSince.get(socket) ?? now) <= now - graceMs ? socket : null;
    }
    return null;
  };
  /** Makes room in `sockets` when it is full; false when no place can be taken. */
  const makeRoom = (sockets: Set<Socket> | undefined, limit: number, now: number): boolean => {
    if (!sockets || sockets.size < limit) return true;
    const waiting = longestWaiting(sockets, now);
    if (!waiting) return false;
    forget(waiting);
    waiting.destroy();
    counts.evicted++;
    return true;
  };

  server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined) {
      // Gone already (reset before it was handed over).
      socket.destroy();
      return;
    }
    const key = addressKey(address);
    const now = performance.now();
    if (!makeRoom(byAddress.get(key), limits.perAddress, now) || !makeRoom(all, limits.total, now)) {
      counts.refused++;
      socket.destroy();
      return;
    }
    keyOf.set(socket, key);
    waitingSince.set(socket, now);
    all.add(socket);
    let ofAddress = byAddress.get(key);
    if (!ofAddress) {
      ofAddress = new Set();
      byAddress.set(key, ofAddress);
    }
    ofAddress.add(socket);
    socket.once("close", () => forget(socket));
  });

  return {
    open(address) {
      if (address === undefined) return all.size;
      return byAddress.get(addressKey(address))?.size ?? 0;
    },
    busy(socket) {
      if (!keyOf.has(socket)) return;
      requests.set(socket, (requests.get(socket) ?? 0) + 1);
    },
    idle(socket) {
      const key = keyOf.get(socket);
      if (key === undefined) return;
      const left = (requests.get(socket) ?? 1) - 1;
      if (left > 0) {
        requests.set(socket, left);
        return;
      }
      requests.delete(socket);
      // Waiting again from now: to the end of the line.
      waitingSince.set(socket, performance.now());
      all.delete(socket);
      all.add(socket);
      const ofAddress = byAddress.get(key)!;
      ofAddress.delete(socket);
      ofAddress.add(socket);
    },
    counts,
  };
}

/** limitConnections for an HTTP server: a connection is busy from its request until its response ends. */
export function limitHttpConnections(server: HttpServer, limits: ConnectionLimits): ConnectionLimiter {
  const limiter = limitConnections(server, limits);
  server.on("request", (request, response) => {
    const socket = request.socket;
    limiter.busy(socket);
    response.once("close", () => limiter.idle(socket));
  });
  return limiter;
}
