import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cli } from "../support/service-harness.js";

// `start` that cannot serve must say why and end with status 1 before it has created anything:
// on a first start, a tenant created before a failed listen would have its key lost for ever.
describe("start refuses to run, and creates nothing, when it cannot serve", () => {
  const dirs: string[] = [];
  const fresh = () => {
    const dir = mkdtempSync(join(tmpdir(), "dl-refusal-"));
    dirs.push(dir);
    return join(dir, "data");
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("names every wrong variable with what is allowed", { timeout: 20_000 }, async () => {
    const dataDir = fresh();
    const result = await cli(
      {
        DMARC_LEDGER_DATA_DIR: dataDir,
        PORT: "abc",
        DMARC_LEDGER_REGION: "EU",
        RATE_LIMIT_PER_SECOND: "lots",
        LOG_LEVEL: "loud",
        DNS_NAMESERVERS: "8.8.8.8:99999",
        DATABASE_URL: "mysql://localhost/x",
        // Settings of the parts start runs beside the API, named in the same message.
        SMTP_PORT: "many",
        SAFE_SPF_MIN_REFRESH: "soon",
      },
      "start",
    );
    expect(result.code).toBe(1);
    expect(result.err).toContain('PORT: "abc" is not an integer from 0 to 65535');
    expect(result.err).toContain('DMARC_LEDGER_REGION: "EU" is not one of global, eu');
    expect(result.err).toContain('RATE_LIMIT_PER_SECOND: "lots" is not an integer');
    expect(result.err).toContain('LOG_LEVEL: "loud" is not one of fatal, error, warn, info');
    expect(result.err).toContain("DNS_NAMESERVERS:");
    expect(result.err).toContain("DATABASE_URL: must start with postgres:// or postgresql://");
    expect(result.err).toContain("SMTP_PORT:");
    expect(result.err).toContain("SAFE_SPF_MIN_REFRESH:");
    expect(existsSync(dataDir)).toBe(false);
  });

  it("says that the port is taken, and leaves no data directory behind", { timeout: 20_000 }, async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, resolve));
    try {
      const port = (taken.address() as { port: number }).port;
      const dataDir = fresh();
      const result = await cli({ DMARC_LEDGER_DATA_DIR: dataDir, PORT: String(port) }, "start");
      expect(result.code).toBe(1);
      expect(result.err).toContain(`cannot listen on port ${port}: another process is using it`);
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
