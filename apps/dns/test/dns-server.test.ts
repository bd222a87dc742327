import { createSocket } from "node:dgram";
import { connect } from "node:net";
import { toTxtStrings } from "@dmarc-ledger/safe-spf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningDnsServer } from "../src/dns-server.js";
import { dig, txtValue } from "./support/dig.js";
import {
  chainedSet,
  type Harness,
  openHarness,
  reportsDomain,
  waitFor,
  zoneName,
} from "./support/harness.js";

const ip4Terms = (count: number, third: number) =>
  Array.from({ length: count }, (_, index) => `ip4:198.51.${third}.${index}`);

/** 3 records: a root and two chained ones. */
const exampleSet = chainedSet("example.com", "0a1b2c3d", [ip4Terms(5, 1), ip4Terms(5, 2), ip4Terms(5, 3)]);
/** One record of about 800 bytes: answers over 512 bytes but within 1232. */
const longValue = `v=spf1 ${ip4Terms(45, 4).join(" ")} -all`;

describe("apps/dns: the authoritative server, asked by dig", () => {
  let harness: Harness;
  let server: RunningDnsServer;
  let port: number;

  beforeAll(async () => {
    harness = await openHarness("dl_dns_server");
    await harness.addDomain("example.com");
    await harness.publish("example.com", exampleSet);
    await harness.addDomain("long.example");
    await harness.publish("long.example", [{ name: `long.example.${zoneName}`, value: longValue }]);
    server = await harness.startServer();
    port = server.ports.udp;
  });
  afterAll(() => harness?.close());

  it("serves a chained set over UDP and TCP, authoritatively", async () => {
    for (const transport of [[], ["+tcp"]]) {
      for (const record of exampleSet) {
        const answer = await dig(port, record.name, "TXT", transport);
        expect(answer.status).toBe("NOERROR");
        expect(answer.flags).toContain("aa");
        expect(answer.answers).toHaveLength(1);
        expect(answer.answers[0]!.type).toBe("TXT");
        expect(answer.answers[0]!.ttl).toBe(300);
        expect(txtValue(answer.answers[0]!.data)).toBe(record.value);
      }
    }
  });

  it("sets TC over UDP when the answer does not fit, and answers whole over TCP", async () => {
    expect(Buffer.byteLength(longValue)).toBeGreaterThan(600);
    const name = `long.example.${zoneName}`;
    const udp = await dig(port, name, "TXT", ["+noedns", "+ignore"]);
    expect(udp.flags).toContain("tc");
    expect(udp.answers).toHaveLength(0);
    const small = await dig(port, name, "TXT", ["+bufsize=600", "+ignore"]);
    expect(small.flags).toContain("tc");
    const tcp = await dig(port, name, "TXT", ["+tcp"]);
    expect(tcp.flags).not.toContain("tc");
    expect(txtValue(tcp.answers[0]!.data)).toBe(longValue);
    // The character-strings as published: none longer than 255 bytes.
    expect(tcp.answers[0]!.data.match(/"/g)).toHaveLength(2 * toTxtStrings(longValue).length);
  });

  it("answers EDNS(0) with an OPT record and honours the requester's buffer size", async () => {
    const name = `long.example.${zoneName}`;
    const answer = await dig(port, name, "TXT", ["+bufsize=1232", "+ignore"]);
    expect(answer.edns).toMatch(/version: 0/);
    expect(answer.text).toMatch(/udp: 1232/);
    expect(answer.flags).not.toContain("tc");
    expect(txtValue(answer.answers[0]!.data)).toBe(longValue);
    // Larger offers are held to our own limit.
    expect((await dig(port, name, "TXT", ["+bufsize=4096"])).text).toMatch(/udp: 1232/);
    const plain = await dig(port, exampleSet[0]!.name, "TXT", ["+noedns"]);
    expect(plain.edns).toBeNull();
    expect(txtValue(plain.answers[0]!.data)).toBe(exampleSet[0]!.value);
    // An EDNS version we do not speak: BADVERS.
    expect((await dig(port, exampleSet[0]!.name, "TXT", ["+edns=1", "+noednsneg"])).status).toBe("BADVERS");
  });

  it("answers NXDOMAIN and NODATA with the zone's SOA in the authority section", async () => {
    const missing = await dig(port, `nothing-here.${zoneName}`, "TXT");
    expect(missing.status).toBe("NXDOMAIN");
    expect(missing.flags).toContain("aa");
    expect(missing.answers).toHaveLength(0);
    expect(missing.authority).toHaveLength(1);
    expect(missing.authority[0]).toMatchObject({ name: `${zoneName}.`, type: "SOA", ttl: 60 });
    expect(missing.authority[0]!.data).toMatch(
      /^ns1\.ledger-dns\.test\. hostmaster\.ledger\.test\. \d+ 3600 600 604800 60$/,
    );

    const nodata = await dig(port, exampleSet[0]!.name, "A");
    expect(nodata.status).toBe("NOERROR");
    expect(nodata.flags).toContain("aa");
    expect(nodata.answers).toHaveLength(0);
    expect(nodata.authority[0]).toMatchObject({ name: `${zoneName}.`, type: "SOA" });

    // A name with names below it exists even without records of its own (RFC 8020).
    const between = await dig(port, `com.${zoneName}`, "TXT");
    expect(between.status).toBe("NOERROR");
    expect(between.authority[0]?.type).toBe("SOA");
    // Case does not matter; the question is echoed as asked.
    const upper = await dig(port, exampleSet[0]!.name.toUpperCase(), "TXT");
    expect(txtValue(upper.answers[0]!.data)).toBe(exampleSet[0]!.value);
  });

  it("serves SOA and NS at each apex, and the reports domain's MX", async () => {
    for (const apex of [zoneName, reportsDomain]) {
      const soa = await dig(port, apex, "SOA");
      expect(soa.flags).toContain("aa");
      expect(soa.answers.map((record) => record.type)).toEqual(["SOA"]);
      const ns = await dig(port, apex, "NS");
      expect(ns.answers.map((record) => record.data).sort()).toEqual([
        "ns1.ledger-dns.test.",
        "ns2.ledger-dns.test.",
      ]);
    }
    const mx = await dig(port, reportsDomain, "MX");
    expect(mx.answers.map((record) => record.data)).toEqual(["10 mx.ledger.test."]);
  });

  it("serves the RFC 7489 §7.1 authorisation record for each tenant domain, and for no other", async () => {
    for (const domain of ["example.com", "long.example"]) {
      const answer = await dig(port, `${domain}._report._dmarc.${reportsDomain}`, "TXT");
      expect(answer.status).toBe("NOERROR");
      expect(answer.flags).toContain("aa");
      expect(answer.answers.map((record) => txtValue(record.data))).toEqual(["v=DMARC1"]);
    }
    expect((await dig(port, `stranger.com._report._dmarc.${reportsDomain}`, "TXT")).status).toBe("NXDOMAIN");
  });

  it("refuses names outside its zones, and other classes", async () => {
    const outside = await dig(port, "example.org", "TXT");
    expect(outside.status).toBe("REFUSED");
    expect(outside.flags).not.toContain("aa");
    expect((await dig(port, "ledger.test", "SOA")).status).toBe("REFUSED");
    expect((await dig(port, "version.bind", "TXT", ["-c", "CH"])).status).toBe("REFUSED");
    expect((await dig(port, zoneName, "AXFR", ["+tcp"])).text).toMatch(/Transfer failed|REFUSED/);
  });

  it("serves a new record within a second of its event, while answering", async () => {
    const set = chainedSet("fresh.example", "11112222", [ip4Terms(3, 7)]);
    const started = Date.now();
    await harness.addDomain("fresh.example");
    await harness.publish("fresh.example", set);
    await waitFor(async () => (await dig(port, set[0]!.name, "TXT")).answers.length === 1, "the new record");
    // Generous for a loaded machine; the store is polled every 50 ms.
    expect(Date.now() - started).toBeLessThan(5000);
    expect((await dig(port, `fresh.example._report._dmarc.${reportsDomain}`, "TXT")).status).toBe("NOERROR");
  });

  it("drops malformed packets and goes on answering", async () => {
    const garbage = [
      Buffer.alloc(0),
      Buffer.from([1, 2, 3]),
      Buffer.from("000001000001000000000000", "hex"), // qdcount 1, no question
      // A question whose name points at itself.
      Buffer.concat([Buffer.from("abcd01000001000000000000", "hex"), Buffer.from([0xc0, 12, 0, 16, 0, 1])]),
      // A label running past the end.
      Buffer.concat([Buffer.from("abcd01000001000000000000", "hex"), Buffer.from([63, 0x61, 0x62])]),
      Buffer.alloc(9000, 0xff),
    ];
    const socket = createSocket("udp4");
    const replies: Buffer[] = [];
    socket.on("message", (message) => replies.push(message));
    await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
    for (const packet of garbage) {
      await new Promise<void>((resolve, reject) =>
        socket.send(packet, port, "127.0.0.1", (error) => (error ? reject(error) : resolve())),
      );
    }
    // Over TCP: a frame of garbage, then a length that never arrives.
    await new Promise<void>((resolve) => {
      const tcp = connect(port, "127.0.0.1", () => {
        tcp.write(Buffer.from([0, 5, 1, 2, 3, 4, 5, 0, 40, 1]));
        setTimeout(() => {
          tcp.destroy();
          resolve();
        }, 200);
      });
      tcp.on("error", () => resolve());
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    socket.close();
    expect(replies).toHaveLength(0);
    const after = await dig(port, exampleSet[0]!.name, "TXT");
    expect(txtValue(after.answers[0]!.data)).toBe(exampleSet[0]!.value);
  });

  it("limits TCP: connections at once, and idle connections are closed", async () => {
    // The harness allows 16 connections and 2 s of idleness.
    const open = (): Promise<{ closedAfterMs: Promise<number> }> =>
      new Promise((resolve, reject) => {
        const started = Date.now();
        const socket = connect(port, "127.0.0.1", () =>
          resolve({
            closedAfterMs: new Promise((done) => socket.once("close", () => done(Date.now() - started))),
          }),
        );
        socket.on("error", () => {});
        socket.once("close", () => reject(new Error("closed before connecting")));
      });
    const held = await Promise.all(Array.from({ length: 16 }, open));
    const extra = await open();
    // Over the limit: closed at once, long before the idle timeout.
    expect(await extra.closedAfterMs).toBeLessThan(1500);
    const idle = await Promise.all(held.map((connection) => connection.closedAfterMs));
    for (const ms of idle) expect(ms).toBeGreaterThanOrEqual(1500);
    // Once they are gone, TCP answers again.
    const after = await dig(port, exampleSet[0]!.name, "TXT", ["+tcp"]);
    expect(txtValue(after.answers[0]!.data)).toBe(exampleSet[0]!.value);
  });

  it("limits TCP per address: one client's connections leave room for another's query", async () => {
    const limited = await harness.startServer({ tcpMaxConnections: 16, tcpMaxConnectionsPerIp: 4 });
    const tcpPort = limited.ports.tcp;
    const open = (): Promise<{ closed: Promise<boolean>; socket: ReturnType<typeof connect> }> =>
      new Promise((resolve, reject) => {
        const socket = connect({ port: tcpPort, host: "127.0.0.1", localAddress: "127.0.0.1" }, () =>
          resolve({ socket, closed: new Promise((done) => socket.once("close", () => done(true))) }),
        );
        socket.on("error", () => {});
        socket.once("close", () => reject(new Error("closed before connecting")));
      });
    // The harness stops the server at the end.
    const held = await Promise.all(Array.from({ length: 4 }, open));
    const extra = await open();
    // The fifth from the same address is closed at once (the four have not waited a second).
    expect(await extra.closed).toBe(true);
    // Another address is served over TCP meanwhile.
    const answer = await dig(tcpPort, exampleSet[0]!.name, "TXT", ["+tcp", "-b", "127.0.0.2"]);
    expect(txtValue(answer.answers[0]!.data)).toBe(exampleSet[0]!.value);
    for (const { socket } of held) socket.destroy();
  });

  it("runs as several replicas of the zone at once", async () => {
    const second = await harness.startServer();
    expect(second.ports.udp).not.toBe(port);
    const answer = await dig(second.ports.udp, exampleSet[1]!.name, "TXT");
    expect(txtValue(answer.answers[0]!.data)).toBe(exampleSet[1]!.value);
  });
});
