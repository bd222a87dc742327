import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { controlSocketName } from "../src/control/protocol.js";
import { opensPGliteForOneCommand } from "../src/short-command.js";

const dataDir = mkdtempSync(join(tmpdir(), "dl-short-command-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
const embedded = { DMARC_LEDGER_DATA_DIR: dataDir };

describe("which command lines open PGlite for one command (and compile it for that)", () => {
  it("the tenant, key, domain and history commands on the embedded database", () => {
    for (const argv of [
      ["tenant", "list"],
      ["tenant", "create", "acme", "--json"],
      ["tenant", "key", "issue", "acme", "--scopes", "read,write"],
      ["domain", "add", "acme", "example.com"],
      ["history", "example.com"],
    ])
      expect(opensPGliteForOneCommand(argv, embedded), argv.join(" ")).toBe(true);
  });

  it("not the service, the bulk commands, DNS-only commands, bare groups or help", () => {
    for (const argv of [
      ["start"],
      ["import", "reports/"],
      ["reprocess"],
      ["replay"],
      ["domain", "status", "example.com"],
      ["spf", "check", "example.com", "--ip", "192.0.2.1"],
      ["tenant"],
      ["tenant", "key"],
      ["tenant", "list", "--help"],
      ["tenant", "create", "-h"],
      ["--version"],
      [],
    ])
      expect(opensPGliteForOneCommand(argv, embedded), argv.join(" ")).toBe(false);
  });

  it("not on PostgreSQL", () => {
    expect(opensPGliteForOneCommand(["tenant", "list"], { DATABASE_URL: "postgres://localhost/x" })).toBe(
      false,
    );
  });

  it("not when a service answers on the data directory's control socket: the command goes there", () => {
    const withService = mkdtempSync(join(tmpdir(), "dl-short-command-service-"));
    try {
      writeFileSync(join(withService, controlSocketName), "");
      expect(opensPGliteForOneCommand(["tenant", "list"], { DMARC_LEDGER_DATA_DIR: withService })).toBe(
        false,
      );
    } finally {
      rmSync(withService, { recursive: true, force: true });
    }
  });
});
