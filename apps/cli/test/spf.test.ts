import { type FixtureDnsServer, providerZones, startFixtureDnsServer } from "@dmarc-ledger/safe-spf/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSpfCommand } from "../src/commands/spf.js";

let server: FixtureDnsServer;
beforeAll(async () => {
  server = await startFixtureDnsServer({
    ...providerZones,
    "cli.customer.test": [{ TXT: "v=spf1 include:_spf.gmail.test include:servers.mcsv.test -all" }],
  });
});
afterAll(() => server.close());

describe("dmarc-ledger spf", () => {
  it("check prints the verdict", async () => {
    const ns = ["--nameserver", server.address];
    const pass = await runSpfCommand(["check", "cli.customer.test", "--ip", "74.125.3.4", ...ns]);
    expect(pass).toMatch(/^pass: 74\.125\.3\.4 for postmaster@cli\.customer\.test/);
    const fail = await runSpfCommand([
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
    expect(fail).toMatch(/^fail: 192\.0\.2\.1 for a@cli\.customer\.test/);
    expect(fail).toContain("lookups: 6");
  });

  it("flatten prints the records, lookups before and after, and sizes", async () => {
    const output = await runSpfCommand(["flatten", "cli.customer.test", "--nameserver", server.address]);
    // Too many networks for one record: the root chains to one more.
    expect(output).toContain("lookups: 6 before, 1 after");
    expect(output).toMatch(/\n {2}cli\.customer\.test \(\d+ bytes\)/);
    expect(output).toMatch(/\n {2}_spf1-[0-9a-f]{8}\.cli\.customer\.test \(\d+ bytes\)/);
    expect(output).toContain("ip4:205.201.128.0/20");
  });

  it("flatten --record --json prints the whole result", async () => {
    const output = await runSpfCommand([
      "flatten",
      "adhoc.test",
      "--record",
      "v=spf1 include:servers.mcsv.test ~all",
      "--nameserver",
      server.address,
      "--json",
    ]);
    const result = JSON.parse(output);
    expect(result.original).toBe("v=spf1 include:servers.mcsv.test ~all");
    expect(result.lookupsBefore).toBe(2);
    expect(result.records[0].value.endsWith("~all")).toBe(true);
  });

  it("flatten prints errors with their code", async () => {
    const output = await runSpfCommand(["flatten", "nowhere.test", "--nameserver", server.address]);
    expect(output).toBe("error (no_spf_record): nowhere.test has no SPF record");
  });
});
