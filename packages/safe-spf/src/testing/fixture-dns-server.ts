import type { Socket } from "node:net";
import { createTCPServer, createUDPServer, Packet, type Resource } from "dns2";
import { RCODE } from "../resolver.js";

/**
 * One record of a fixture zone, written like the RFC 7208 test suite's zonedata:
 * `{ TXT: "v=spf1 -all" }`, `{ TXT: ["part1", "part2"] }`, `{ MX: [10, "mx.example.com"] }`,
 * `"TIMEOUT"` (queries for types the name has no records of go unanswered), `"SERVFAIL"` (every
 * query for the name is answered SERVFAIL, as a broken authoritative server makes resolvers do). An `SPF` record also
 * answers TXT queries unless the name has TXT records of its own; `{ TXT: "NONE" }` gives a name
 * TXT records of its own without any.
 */
export type FixtureRecord =
  | "TIMEOUT"
  | "SERVFAIL"
  | ({ ttl?: number } & (
      | { TXT: string | string[] }
      | { SPF: string | string[] }
      | { A: string }
      | { AAAA: string }
      | { MX: [number, string] }
      | { PTR: string }
      | { CNAME: string }
    ));

export type FixtureZones = Record<string, FixtureRecord[]>;

export interface FixtureDnsServerOptions {
  /** Delay before each answer, to model network latency. */
  delayMs?: number;
  /** Names (any type) that never get an answer. */
  silentNames?: string[];
  /** TTL of records without their own; default 300 s. */
  ttl?: number;
}

export interface FixtureQuery {
  name: string;
  type: string;
  transport: "udp" | "tcp";
}

export interface FixtureDnsServer {
  host: string;
  port: number;
  /** "127.0.0.1:PORT", as the resolver's `nameservers` takes it. */
  address: string;
  /** Questions received, over UDP and TCP. */
  readonly queries: number;
  queryLog: FixtureQuery[];
  setZones(zones: FixtureZones): void;
  close(): Promise<void>;
}

const typeNames = new Map<number, string>(Object.entries(Packet.TYPE).map(([name, code]) => [code, name]));

interface Answer {
  name: string;
  type: string;
  ttl: number;
  value: unknown;
}

function udpPayloadSize(request: Packet): number {
  const opt = request.additionals.find((record) => record.type === Packet.TYPE.EDNS);
  return Math.max(opt?.class ?? 0, 512);
}

const normalize = (name: string) => (name.endsWith(".") ? name.slice(0, -1) : name).toLowerCase();

/** dns2 writes a TXT string longer than 255 bytes with a wrapped length byte: split it here. */
function characterStrings(value: string | string[]): Buffer[] {
  const out: Buffer[] = [];
  for (const text of ([] as string[]).concat(value)) {
    const bytes = Buffer.from(text, "utf8");
    if (bytes.length === 0) out.push(bytes);
    for (let offset = 0; offset < bytes.length; offset += 255) out.push(bytes.subarray(offset, offset + 255));
  }
  return out;
}

function recordsOfType(records: FixtureRecord[], type: string, defaultTtl: number): Answer[] | null {
  const objects = records.filter(
    (record): record is Exclude<FixtureRecord, string> => typeof record !== "string",
  );
  const ofType = (wanted: string) =>
    objects.filter((record) => wanted in record && (record as Record<string, unknown>)[wanted] !== "NONE");
  let chosen = ofType(type);
  if (type === "TXT" && !objects.some((record) => "TXT" in record)) chosen = ofType("SPF");
  if (chosen.length === 0) return null;
  return chosen.map((record) => {
    const key = type === "TXT" && !("TXT" in record) ? "SPF" : type;
    return { name: "", type, ttl: record.ttl ?? defaultTtl, value: (record as Record<string, unknown>)[key] };
  });
}

function toResource(answer: Answer): Resource {
  const base = {
    name: answer.name,
    type: Packet.TYPE[answer.type as "A"],
    class: Packet.CLASS.IN,
    ttl: answer.ttl,
  };
  switch (answer.type) {
    case "A":
    case "AAAA":
      return { ...base, address: answer.value as string } as Resource;
    case "MX": {
      const [priority, exchange] = answer.value as [number, string];
      return { ...base, priority, exchange: normalize(exchange) } as Resource;
    }
    case "PTR":
    case "CNAME":
      return { ...base, domain: normalize(answer.value as string) } as Resource;
    default:
      return { ...base, data: characterStrings(answer.value as string | string[]) } as unknown as Resource;
  }
}

/**
 * A real DNS server (dns2, UDP and TCP on the same port of 127.0.0.1) serving fixture zones, for tests
 * and benchmarks that must not mock DNS. Answers over UDP that exceed 512 bytes carry the TC bit, so
 * clients retry over TCP.
 */
export async function startFixtureDnsServer(
  zones: FixtureZones,
  options: FixtureDnsServerOptions = {},
): Promise<FixtureDnsServer> {
  let zoneMap = new Map<string, FixtureRecord[]>();
  // dns2 encodes bit by bit: slow enough to distort benchmarks. Answers are encoded once per question
  // and transport, and only the ID is patched in afterwards (null: stay silent).
  const encoded = new Map<string, Buffer | null>();
  const setZones = (next: FixtureZones) => {
    zoneMap = new Map(Object.entries(next).map(([name, records]) => [normalize(name), records]));
    encoded.clear();
  };
  setZones(zones);
  const silent = new Set((options.silentNames ?? []).map(normalize));
  const defaultTtl = options.ttl ?? 300;
  const queryLog: FixtureQuery[] = [];

  function answer(request: Packet): Packet | null {
    const response = Packet.createResponseFromRequest(request);
    response.header.aa = 1;
    const question = request.questions[0];
    if (!question) return response;
    const type = typeNames.get(question.type) ?? String(question.type);
    let name = normalize(question.name);
    if (silent.has(name)) return null;
    // Follow CNAMEs the way a recursive resolver would, stopping at loops.
    for (let hop = 0; hop < 8; hop++) {
      const records = zoneMap.get(name);
      if (!records) {
        if (hop === 0) response.header.rcode = RCODE.NXDOMAIN;
        return response;
      }
      if (records.includes("SERVFAIL")) {
        response.header.rcode = RCODE.SERVFAIL;
        response.answers = [];
        return response;
      }
      const found = recordsOfType(records, type, defaultTtl);
      if (found) {
        for (const record of found)
          response.answers.push(toResource({ ...record, name: hop === 0 ? question.name : name }));
        return response;
      }
      const cname = type === "CNAME" ? null : recordsOfType(records, "CNAME", defaultTtl);
      if (cname) {
        const target = normalize(cname[0]!.value as string);
        response.answers.push(toResource({ ...cname[0]!, name: hop === 0 ? question.name : name }));
        name = target;
        continue;
      }
      return records.includes("TIMEOUT") ? null : response;
    }
    return response;
  }

  /** Over UDP, an answer larger than the client's payload size becomes header + question with TC set. */
  function encode(request: Packet, transport: "udp" | "tcp"): Buffer | null {
    const response = answer(request);
    if (!response) return null;
    const bytes = response.toBuffer();
    if (transport === "tcp" || bytes.length <= udpPayloadSize(request)) return bytes;
    const truncated = Packet.createResponseFromRequest(request);
    truncated.header.tc = 1;
    truncated.header.aa = 1;
    return truncated.toBuffer();
  }

  let queries = 0;
  const handle = (transport: "udp" | "tcp") => (request: Packet, send: (response: Buffer) => void) => {
    queries++;
    const question = request.questions[0];
    queryLog.push({
      name: question ? normalize(question.name) : "",
      type: question ? (typeNames.get(question.type) ?? String(question.type)) : "",
      transport,
    });
    const key = `${transport} ${udpPayloadSize(request)} ${request.header.rd} ${question?.name} ${question?.type}`;
    if (!encoded.has(key)) encoded.set(key, encode(request, transport));
    const template = encoded.get(key);
    if (!template) return;
    const bytes = Buffer.from(template);
    bytes.writeUInt16BE(request.header.id, 0);
    if (options.delayMs) setTimeout(() => send(bytes), options.delayMs);
    else send(bytes);
  };

  const host = "127.0.0.1";
  const sockets = new Set<Socket>();
  for (let attempt = 0; ; attempt++) {
    const udp = createUDPServer(handle("udp") as never);
    await udp.listen(0, host);
    const port = udp.address().port;
    const tcp = createTCPServer(handle("tcp") as never);
    tcp.on("connection", (socket: Socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
    const listening = await new Promise<boolean>((resolve) => {
      tcp.once("error", () => resolve(false));
      tcp.listen(port, host, () => resolve(true));
    });
    if (!listening) {
      udp.close();
      if (attempt < 20) continue;
      throw new Error("could not bind UDP and TCP on one port");
    }
    return {
      host,
      port,
      address: `${host}:${port}`,
      get queries() {
        return queries;
      },
      queryLog,
      setZones,
      close: async () => {
        for (const socket of sockets) socket.destroy();
        await Promise.all([
          new Promise<void>((resolve) => udp.close(() => resolve())),
          new Promise<void>((resolve) => tcp.close(() => resolve())),
        ]);
      },
    };
  }
}
