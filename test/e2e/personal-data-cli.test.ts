import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failureCorpus } from "../support/corpus.js";
import { type Backend, cli, pgliteBackend } from "../support/service-harness.js";

const failure = `${failureCorpus}dmarc_ruf_report_linkedin.eml`;

describe("the personal-data commands, embedded (a master key made in the data directory)", () => {
  let backend: Backend;
  let env: NodeJS.ProcessEnv;
  let tenantId: string;
  const tmp = mkdtempSync(join(tmpdir(), "dl-pd-cli-"));

  beforeAll(async () => {
    backend = await pgliteBackend();
    env = backend.env;
    tenantId = JSON.parse((await cli(env, "tenant", "create", "acme", "--json")).out).tenantId;
    expect((await cli(env, "domain", "add", "acme", "example.com")).code).toBe(0);
    const imported = await cli(env, "import", failure);
    expect(imported.code, imported.err).toBe(0);
  });
  afterAll(async () => {
    await backend?.cleanup();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("made the master key on first use, readable by its owner only", () => {
    const path = join(env.DMARC_LEDGER_DATA_DIR!, "master.key");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(path, "utf8").trim(), "base64")).toHaveLength(32);
  });

  it("tenant policy shows the defaults, sets what it is given, refuses what is out of range", async () => {
    expect((await cli(env, "tenant", "policy", "acme")).out).toBe(
      "failure reports: 90 days\nraw inputs: 90 days\naggregate facts: kept\nredaction: on",
    );
    const set = await cli(
      env,
      "tenant",
      "policy",
      "acme",
      "--failure-report-days",
      "30",
      "--redaction",
      "off",
    );
    expect(set.code, set.err).toBe(0);
    expect(set.out).toBe(
      "failure reports: 30 days\nraw inputs: 90 days\naggregate facts: kept\nredaction: off",
    );
    expect((await cli(env, "tenant", "policy", "acme")).out).toContain("failure reports: 30 days");
    const wrong = await cli(env, "tenant", "policy", "acme", "--raw-input-days", "0");
    expect(wrong.code).toBe(1);
    expect(wrong.err).toContain("--raw-input-days");
  });

  it("retention run: nothing of today has expired", async () => {
    const run = await cli(env, "retention", "run");
    expect(run.code, run.err).toBe(0);
    expect(run.out).toBe("Nothing had expired.");
  });

  it("keys rotate: rewraps under the new key; the old one alone is then refused, naming MASTER_KEY", async () => {
    for (const person of ["ada@people.example", "bea@people.example"]) {
      expect((await cli(env, "user", "add", "acme", person, "--role", "admin")).code).toBe(0);
    }
    const old = readFileSync(join(env.DMARC_LEDGER_DATA_DIR!, "master.key"), "utf8").trim();
    const next = randomBytes(32).toString("base64");
    const rotated = await cli({ ...env, MASTER_KEY: next, MASTER_KEY_PREVIOUS: old }, "keys", "rotate");
    expect(rotated.code, rotated.err).toBe(0);
    expect(rotated.out).toMatch(/^[1-9]\d* data keys rewrapped under MASTER_KEY/);
    const refused = await cli(env, "import", failure);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain("MASTER_KEY: is not the key that wrapped the stored data keys");
    expect(refused.err).not.toContain(old);
    // The people's addresses open, and the blind index finds them: its secret was rewrapped too.
    const listed = await cli({ ...env, MASTER_KEY: next }, "user", "list", "acme");
    expect(listed.out).toMatch(/ada@people\.example.*\n.*bea@people\.example/);
    const removed = await cli({ ...env, MASTER_KEY: next }, "user", "remove", "acme", "Ada@People.example");
    expect(removed.code, removed.err).toBe(0);
    const withNew = await cli({ ...env, MASTER_KEY: next }, "tenant", "erase", "acme");
    // Without --confirm: says what it would do, erases nothing.
    expect(withNew.code).toBe(1);
    expect(withNew.err).toContain(`run again with --confirm ${tenantId}`);
    const erased = await cli({ ...env, MASTER_KEY: next }, "tenant", "erase", "acme", "--confirm", tenantId);
    expect(erased.code, erased.err).toBe(0);
    expect(erased.out).toBe(
      [
        "Erased: 1 data keys shredded, 1 failure reports' personal fields, 1 raw inputs' bytes, 1 people.",
        "The tenant has no people now: `dmarc-ledger user add acme EMAIL --role admin` gives it an admin.",
      ].join("\n"),
    );
    expect((await cli({ ...env, MASTER_KEY: next }, "user", "list", "acme")).out).toMatch(/^No people yet/);
  });
});
