import { randomInt } from "node:crypto";
import { createSocket, type Socket } from "node:dgram";
import { isIPv6 } from "node:net";
import { Packet, type Question, TCPClient } from "dns2";

/** DNS response codes (dns2 has them at runtime but not in its types). */
export const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;

export type DnsRecordType = "TXT" | "A" | "AAAA" | "MX" | "PTR";

export interface DnsAnswer {
  /** NXDOMAIN and NOERROR-without-records are both "void" for SPF, but are told apart here. */
  rcode: "NOERROR" | "NXDOMAIN";
  /** TXT: the strings of each record joined with no separator; MX: exchanges; PTR: names; A/AAAA: addresses. */
  values: string[];
  /** Seconds this answer stays valid. */
  ttl: number;
}

export class DnsLookupError extends Error {
  constructor(
    readonly code: "timeout" | "servfail" | "refused" | "error",
    readonly query: string,
    detail: string,
  ) {
    super(`DNS ${code} for ${query}: ${detail}`);
    this.name = "DnsLookupError";
  }
}

export interface ResolverStats {
  /** Questions sent over the network (retries and TCP fallbacks not included). */
  queries: number;
  cacheHits: number;
  retries: number;
  tcpFallbacks: number;
  timeouts: number;
}

export interface SpfResolver {
  lookup(name: string, type: DnsRecordType): Promise<DnsAnswer>;
  readonly stats: ResolverStats;
  readonly queries: number;
}

export interface ResolverOptions {
  /** "host:port" or "host" (port 53). */
  nameservers?: string[];
  timeoutMs?: number;
  retries?: number;
  /** TTL for NXDOMAIN/empty answers that carry no SOA record. */
  negativeTtlSeconds?: number;
  /**
   * Answers kept at most (default 100,000): a long-running process that asks about every report
   * source would otherwise keep every answer it ever had. The oldest go first.
   */
  maxCacheEntries?: number;
}

interface Nameserver {
  host: string;
  port: number;
}

function parseNameserver(text: string): Nameserver {
  const bracketed = /^\[(.+)\](?::(\d+))?$/.exec(text);
  if (bracketed) return { host: bracketed[1]!, port: Number(bracketed[2] ?? 53) };
  const parts = text.split(":");
  if (parts.length === 2) return { host: parts[0]!, port: Number(parts[1]) };
  return { host: text, port: 53 };
}

function withTimeout<T>(promise: Promise<T>, ms: number, query: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DnsLookupError("timeout", query, `no answer in ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * UDP queries over one socket per address family, answers matched by source and ID. dns2's UDPClient
 * opens a socket per query, which costs more than the query when a flattening asks 50 at once. A
 * socket closes as soon as no query waits on it, so resolvers hold no descriptors while idle.
 */
function createUdpTransport(timeoutMs: number) {
  type Waiter = { family: "udp4" | "udp6"; settle: (error: Error | null, packet?: Packet) => void };
  const sockets = new Map<"udp4" | "udp6", Socket>();
  const pending = new Map<string, Waiter>();

  const finish = (key: string, error: Error | null, packet?: Packet) => {
    const waiter = pending.get(key);
    if (!waiter) return;
    pending.delete(key);
    if (![...pending.values()].some((other) => other.family === waiter.family)) {
      sockets.get(waiter.family)?.close();
      sockets.delete(waiter.family);
    }
    waiter.settle(error, packet);
  };

  const socketFor = (family: "udp4" | "udp6") => {
    const existing = sockets.get(family);
    if (existing) return existing;
    const socket = createSocket(family);
    socket.on("message", (message, remote) => {
      try {
        const packet = Packet.parse(message);
        finish(`${remote.address}:${remote.port}:${packet.header.id}`, null, packet);
      } catch {
        // Not a DNS message: not an answer to anything we asked.
      }
    });
    socket.on("error", (error) => {
      for (const [key, waiter] of pending) if (waiter.family === family) finish(key, error);
    });
    sockets.set(family, socket);
    return socket;
  };

  return {
    ask(server: Nameserver, name: string, type: DnsRecordType): Promise<Packet> {
      const family = isIPv6(server.host) ? "udp6" : "udp4";
      const socket = socketFor(family);
      const query = new Packet();
      let key: string;
      do {
        query.header.id = randomInt(0x10000);
        key = `${server.host}:${server.port}:${query.header.id}`;
      } while (pending.has(key));
      query.header.rd = 1;
      query.questions.push({ name, type: Packet.TYPE[type], class: Packet.CLASS.IN } as Question);
      return new Promise<Packet>((resolve, reject) => {
        const timer = setTimeout(
          () => finish(key, new DnsLookupError("timeout", `${name}/${type}`, `no answer in ${timeoutMs} ms`)),
          timeoutMs,
        );
        pending.set(key, {
          family,
          settle: (error, packet) => {
            clearTimeout(timer);
            if (error) reject(error);
            else resolve(packet!);
          },
        });
        socket.send(query.toBuffer(), server.port, server.host, (error) => {
          if (error) finish(key, error);
        });
      });
    },
  };
}

export function normalizeName(name: string): string {
  return (name.endsWith(".") ? name.slice(0, -1) : name).toLowerCase();
}

function valuesOf(packet: Packet, type: DnsRecordType): { values: string[]; ttl: number | null } {
  const wanted = Packet.TYPE[type];
  let ttl: number | null = null;
  const values: string[] = [];
  for (const answer of packet.answers) {
    // A CNAME chain comes with the answer; its TTL bounds how long the answer holds.
    if (answer.type !== wanted && answer.type !== Packet.TYPE.CNAME) continue;
    ttl = ttl === null ? answer.ttl : Math.min(ttl, answer.ttl);
    if (answer.type !== wanted) continue;
    if (type === "TXT") values.push(([] as string[]).concat(answer.data ?? []).join(""));
    else if (type === "MX") values.push(normalizeName(answer.exchange ?? ""));
    else if (type === "PTR") values.push(normalizeName(answer.domain ?? ""));
    else values.push(answer.address ?? "");
  }
  return { values, ttl };
}

/**
 * A stub resolver on dns2 for SPF: asks the configured nameservers over UDP, falls back to TCP on
 * truncation, caches answers for their TTL and shares one in-flight query among concurrent callers,
 * so each name is asked at most once while its answer is valid.
 */
export function createResolver(options: ResolverOptions = {}): SpfResolver {
  const nameservers = (options.nameservers ?? ["127.0.0.1:53"]).map(parseNameserver);
  const timeoutMs = options.timeoutMs ?? 2000;
  const retries = options.retries ?? 1;
  const negativeTtl = options.negativeTtlSeconds ?? 60;
  const maxCacheEntries = options.maxCacheEntries ?? 100_000;
  const stats: ResolverStats = { queries: 0, cacheHits: 0, retries: 0, tcpFallbacks: 0, timeouts: 0 };
  const cache = new Map<string, { answer: DnsAnswer; expires: number }>();
  const inFlight = new Map<string, Promise<DnsAnswer>>();
  // A long-lived resolver (the refresher's) would otherwise keep every name it ever asked.
  let sweepAt = 10_000;
  const sweepExpired = () => {
    const now = Date.now();
    for (const [key, entry] of cache) if (entry.expires <= now) cache.delete(key);
    sweepAt = Math.max(10_000, cache.size * 2);
  };

  const udp = createUdpTransport(timeoutMs);

  async function ask(server: Nameserver, name: string, type: DnsRecordType): Promise<Packet> {
    const query = `${name}/${type}`;
    const packet = await udp.ask(server, name, type);
    if (!packet.header.tc) return packet;
    stats.tcpFallbacks++;
    const tcp = TCPClient({ dns: server.host, port: server.port });
    return withTimeout(tcp(name, type), timeoutMs, query);
  }

  async function resolve(name: string, type: DnsRecordType): Promise<DnsAnswer> {
    stats.queries++;
    let lastError: unknown;
    for (const server of nameservers) {
      for (let attempt = 0; attempt <= retries; attempt++) {
        if (attempt > 0) stats.retries++;
        let packet: Packet;
        try {
          packet = await ask(server, name, type);
        } catch (error) {
          if (error instanceof DnsLookupError && error.code === "timeout") stats.timeouts++;
          lastError = error;
          continue;
        }
        const rcode = packet.header.rcode;
        if (rcode === RCODE.NXDOMAIN || rcode === RCODE.NOERROR) {
          const { values, ttl } = valuesOf(packet, type);
          const soa = packet.authorities.find((record) => record.type === Packet.TYPE.SOA);
          const voidTtl = soa ? Math.min(soa.ttl, soa.minimum ?? soa.ttl) : negativeTtl;
          return {
            rcode: rcode === RCODE.NXDOMAIN ? "NXDOMAIN" : "NOERROR",
            values,
            ttl: values.length > 0 && ttl !== null ? ttl : voidTtl,
          };
        }
        lastError = new DnsLookupError(
          rcode === RCODE.REFUSED ? "refused" : "servfail",
          name,
          `rcode ${rcode}`,
        );
        break;
      }
    }
    if (lastError instanceof DnsLookupError) throw lastError;
    throw new DnsLookupError("error", `${name}/${type}`, String(lastError));
  }

  return {
    stats,
    get queries() {
      return stats.queries;
    },
    lookup(rawName, type) {
      const name = normalizeName(rawName);
      const key = `${type} ${name}`;
      const now = Date.now();
      const cached = cache.get(key);
      // Less than a second left is expired: handed out, it would say TTL 0 (TTLs are whole
      // seconds), and a record built from it would be due again at once, from the same answer.
      if (cached && cached.expires - now >= 1000) {
        stats.cacheHits++;
        // What is left of the TTL, not the TTL first received: a flattening that reads the
        // cache must learn when the answer it depended on really goes stale.
        return Promise.resolve({ ...cached.answer, ttl: Math.floor((cached.expires - now) / 1000) });
      }
      const pending = inFlight.get(key);
      if (pending) {
        stats.cacheHits++;
        return pending;
      }
      const promise = resolve(name, type)
        .then((answer) => {
          if (cache.size >= sweepAt) sweepExpired();
          cache.delete(key);
          cache.set(key, { answer, expires: Date.now() + answer.ttl * 1000 });
          // A Map iterates in insertion order: the first keys are the oldest answers.
          for (const oldest of cache.keys()) {
            if (cache.size <= maxCacheEntries) break;
            cache.delete(oldest);
          }
          return answer;
        })
        .finally(() => inFlight.delete(key));
      inFlight.set(key, promise);
      return promise;
    },
  };
}

/**
 * A resolver that answers TXT for some names from memory and the rest from `base`: how the published
 * set is evaluated before our DNS server serves it.
 */
export function createOverlayResolver(
  base: SpfResolver,
  txtRecords: { name: string; value: string }[],
): SpfResolver {
  const overlay = new Map<string, string[]>();
  for (const record of txtRecords) {
    const name = normalizeName(record.name);
    overlay.set(name, [...(overlay.get(name) ?? []), record.value]);
  }
  return {
    get stats() {
      return base.stats;
    },
    get queries() {
      return base.queries;
    },
    lookup(name, type) {
      const values = type === "TXT" ? overlay.get(normalizeName(name)) : undefined;
      if (values) return Promise.resolve({ rcode: "NOERROR", values, ttl: 0 });
      return base.lookup(name, type);
    },
  };
}
