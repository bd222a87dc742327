import { createSocket, type Socket } from "node:dgram";
import { type FixtureDnsServer, providerZones, startFixtureDnsServer } from "@dmarc-ledger/safe-spf/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CliIO } from "../src/io.js";
import { runCliHere } from "../src/program.js";

let server: FixtureDnsServer;
/** A UDP port that takes questions and never answers. */
let silent: Socket;
let silentAddress: string;
beforeAll(async () => {
  server = await startFixtureDnsServer({
    ...providerZones,
    "cli.customer.test": [{ TXT: "v=spf1 include:_spf.gmail.test include:servers.mcsv.test -all" }],
  });
  silent = createSocket("udp4");
  await new Promise<void>((resolve) => silent.bind(0, "127.0.0.1", resolve));
  silentAddress = `127.0.0.1:${silent.address().port}`;
});
afterAll(async () => {
  await server.close();
  silent.close();
});

/** `dmarc-ledger spf …` as the command line runs it, in this process. */
async function spf(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIO = { out: (text) => out.push(text), err: (text) => err.push(text) };
  const code = await runCliHere(["spf", ...args], io, env);
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("dmarc-ledger spf", () => {
  it("check prints the verdict", async () => {
    const ns = ["--nameserver", server.address];
    const pass = await spf(["check", "cli.customer.test", "--ip", "74.125.3.4", ...ns]);
    expect(pass.code).toBe(0);
    expect(pass.out).toMatch(/^pass: 74\.125\.3\.4 for postmaster@cli\.customer\.test/);
    const fail = await spf([
      "check",
      "cli.customer.test",
      "--ip",
      "192.0.2.1",
      "--sender",
      "a@cli.customer.test",
      "--helo",
      "mx.example",
      ...ns,
    ]);
    // A fail is a verdict: the command did its job.
    expect(fail.code).toBe(0);
    expect(fail.out).toMatch(/^fail: 192\.0\.2\.1 for a@cli\.customer\.test/);
    expect(fail.out).toContain("lookups: 6");
  });

  it("asks DNS_NAMESERVERS, as the service does, when no --nameserver is given", async () => {
    const env = { DNS_NAMESERVERS: server.address };
    const check = await spf(["check", "cli.customer.test", "--ip", "74.125.3.4"], env);
    expect(check.out).toMatch(/^pass: /);
    expect(check.code).toBe(0);
    const flattened = await spf(["flatten", "cli.customer.test"], env);
    expect(flattened.code).toBe(0);
    expect(flattened.out).toContain("lookups: 6 before, 1 after");
    // A wrong variable is named, as at start.
    const wrong = await spf(["check", "cli.customer.test", "--ip", "74.125.3.4"], {
      DNS_NAMESERVERS: "a:b:c",
    });
    expect(wrong.code).toBe(1);
    expect(wrong.err).toContain("DNS_NAMESERVERS:");
  });

  it("check ends with status 1 on a temperror: no verdict could be had", async () => {
    const env = { DNS_NAMESERVERS: silentAddress, DNS_TIMEOUT_MS: "200" };
    const result = await spf(["check", "cli.customer.test", "--ip", "74.125.3.4"], env);
    expect(result.out).toMatch(/^temperror: /);
    expect(result.code).toBe(1);
    expect(result.err).toContain(
      `error: no verdict: a DNS answer the check needed could not be had from ${silentAddress} (DNS_NAMESERVERS)`,
    );
  });

  it("flatten prints the records, lookups before and after, and sizes", async () => {
    const { code, out } = await spf(["flatten", "cli.customer.test", "--nameserver", server.address]);
    expect(code).toBe(0);
    // Too many networks for one record: the root chains to one more.
    expect(out).toContain("lookups: 6 before, 1 after");
    expect(out).toMatch(/\n {2}cli\.customer\.test \(\d+ bytes\)/);
    expect(out).toMatch(/\n {2}_spf1-[0-9a-f]{8}\.cli\.customer\.test \(\d+ bytes\)/);
    expect(out).toContain("ip4:205.201.128.0/20");
  });

  it("flatten --record --json prints the whole result", async () => {
    const { out } = await spf([
      "flatten",
      "adhoc.test",
      "--record",
      "v=spf1 include:servers.mcsv.test ~all",
      "--nameserver",
      server.address,
      "--json",
    ]);
    const result = JSON.parse(out);
    expect(result.original).toBe("v=spf1 include:servers.mcsv.test ~all");
    expect(result.lookupsBefore).toBe(2);
    expect(result.records[0].value.endsWith("~all")).toBe(true);
  });

  it("flatten prints errors with their code, and ends with status 1", async () => {
    const result = await spf(["flatten", "nowhere.test", "--nameserver", server.address]);
    expect(result.code).toBe(1);
    expect(result.err).toBe("error (no_spf_record): nowhere.test has no SPF record");
    const unanswered = await spf(["flatten", "cli.customer.test"], {
      DNS_NAMESERVERS: silentAddress,
      DNS_TIMEOUT_MS: "200",
    });
    expect(unanswered.code).toBe(1);
    expect(unanswered.err).toMatch(/^error/);
  });
});
