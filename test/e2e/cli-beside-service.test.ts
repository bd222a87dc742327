/**
 * In embedded mode `dmarc-ledger start` holds the data directory; every other command is handed
 * to it over the control socket in that directory (issue 13), from this process and from a real
 * CLI process.
 */
import { spawn } from "node:child_process";
import { realpathSync } from "node:fs";
import { stat, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { runCliHere, startService } from "@dmarc-ledger/cli";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import { startFixtureDnsServer } from "@dmarc-ledger/safe-spf/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtEntry } from "../support/built-processes.js";
import { capturingLogger } from "../support/capturing-logger.js";
import { aggregateCorpus } from "../support/corpus.js";
import { type Backend, cli, pgliteBackend } from "../support/service-harness.js";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** The real command line, as a user runs it, in its own process. */
async function cliProcess(
  env: NodeJS.ProcessEnv,
  cwd: string,
  ...argv: string[]
): Promise<{ code: number; out: string; pid: number }> {
  const cli = await builtEntry("apps/cli/dist/main.js");
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...cli, ...argv], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += String(chunk);
    });
    child.once("error", reject);
    child.once("close", (code) => resolve({ code: code ?? -1, out, pid: child.pid ?? -1 }));
  });
}

describe("the CLI beside a running embedded service", () => {
  let backend: Backend;
  let runtime: Runtime;
  let stop: () => Promise<void>;
  // The service's log, as JSON lines.
  const logged: string[] = [];
  let apiRoot: string;

  beforeAll(async () => {
    backend = await pgliteBackend();
    runtime = await openRuntime(backend.env);
    const service = await startService({
      runtime,
      env: backend.env,
      port: 0,
      logger: capturingLogger(logged),
      bootstrapTenant: false,
      controlCommands: (argv, io) => runCliHere(argv, io, backend.env),
    });
    apiRoot = service.apiRoot;
    stop = async () => {
      await service.stop();
      await runtime.close();
    };
  });

  afterAll(async () => {
    await stop?.();
    await backend?.cleanup();
  });

  it("keeps the control socket owner-only", async () => {
    const socket = await stat(join(backend.env.DMARC_LEDGER_DATA_DIR!, "control.sock"));
    expect(socket.isSocket()).toBe(true);
    expect(socket.mode & 0o777).toBe(0o600);
  });

  it("runs a real CLI process's command in the service, which holds the data directory", async () => {
    const created = await cliProcess(backend.env, root, "tenant", "create", "beside", "--json");
    expect(created.code).toBe(0);
    const { tenantId } = JSON.parse(created.out) as { tenantId: string };
    const listed = await cli(backend.env, "tenant", "list");
    expect(listed.code).toBe(0);
    expect(listed.out).toContain(tenantId);
  });

  it("adds a person in the service, whose link sets their password on its API", async () => {
    const created = await cli(backend.env, "tenant", "create", "people", "--json");
    expect(created.code, created.err).toBe(0);
    const added = await cli(backend.env, "user", "add", "people", "Ada@People.example", "--role", "admin");
    expect(added.code, added.err).toBe(0);
    expect(added.out).toMatch(/^ada@people\.example added as admin \(user [0-9a-f]{16}\)\./);
    const token = /set-password#token=([A-Za-z0-9_-]{43})/.exec(added.out)![1]!;
    const set = await fetch(`${apiRoot}set_password`, {
      method: "PUT",
      body: new URLSearchParams({ token, password: "ada's long enough password" }),
    });
    expect(set.status).toBe(200);
    const listed = await cli(backend.env, "user", "list", "people");
    expect(listed.out).toMatch(/ada@people\.example {2}admin {2}password set {2}last sign-in never/);
    const refused = await cli(backend.env, "user", "add", "people", "not an address", "--role", "viewer");
    expect(refused).toMatchObject({ code: 1, err: expect.stringContaining("is not an e-mail address") });
  });

  it("passes exit statuses and errors through", async () => {
    const refused = await cli(backend.env, "domain", "add", "nobody", "beside-ledger.com");
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('There is no tenant "nobody"');
  });

  it("imports a file named relative to the caller's directory, not the service's", async () => {
    const dataDir = resolve(root, backend.env.DMARC_LEDGER_DATA_DIR!);
    const imported = await cliProcess(
      { DMARC_LEDGER_DATA_DIR: dataDir },
      aggregateCorpus,
      "import",
      "addisonfoods.com!example.com!1536105600!1536191999.xml",
    );
    expect(imported.code).toBe(0);
    expect(imported.out).toContain("1 reports stored");
    // The caller's directory as the process sees it: the real path, when the corpus is reached
    // through a symbolic link.
    expect(imported.out).toContain(`${realpathSync(aggregateCorpus)}/addisonfoods.com`);
  });

  it("runs the command itself when the socket is left over and nobody answers", async () => {
    const dataDir = (await pgliteBackend()).env.DMARC_LEDGER_DATA_DIR!;
    await writeFile(join(dataDir, "control.sock"), "");
    const listed = await cli({ DMARC_LEDGER_DATA_DIR: dataDir }, "tenant", "list");
    expect(listed.code).toBe(0);
    expect(listed.out).toContain("No tenants yet");
  });

  it("logs each command it runs: who handed it over, what, the outcome; never a key or a secret", async () => {
    const created = await cliProcess(backend.env, root, "tenant", "create", "logged", "--json");
    expect(created.code).toBe(0);
    const { apiKey } = JSON.parse(created.out) as { apiKey: string };
    // A key given where a key id belongs (refused), and a secret-looking option (unknown).
    const refused = await cliProcess(backend.env, root, "tenant", "key", "revoke", "logged", apiKey);
    expect(refused.code).toBe(1);
    const unknown = await cliProcess(backend.env, root, "domain", "list", "--api-token", "hunter2");
    expect(unknown.code).toBe(1);

    const lines = logged.map((line) => JSON.parse(line) as Record<string, unknown>);
    const byPid = (pid: number) => lines.find((line) => (line.caller as { pid: number } | null)?.pid === pid);
    expect(byPid(created.pid)).toMatchObject({
      level: 30,
      msg: "control command",
      caller: { pid: created.pid, user: expect.any(String) },
      argv: ["tenant", "create", "logged", "--json"],
      cwd: root.replace(/\/$/, ""),
      exit: 0,
      durationMs: expect.any(Number),
    });
    expect(byPid(refused.pid)).toMatchObject({
      level: 40,
      msg: "control command failed",
      argv: ["tenant", "key", "revoke", "logged", `${apiKey.slice(0, "dlk_global_".length + 6)}…[redacted]`],
      exit: 1,
      error: expect.stringContaining("has no API key"),
    });
    expect(byPid(unknown.pid)).toMatchObject({
      argv: ["domain", "list", "--api-token", "[redacted]"],
      exit: 1,
    });
    const all = logged.join("\n");
    expect(all).not.toContain(apiKey);
    expect(all).not.toContain("hunter2");
  });

  it("runs the DNS commands here, with the caller's settings, as it would without the service", async () => {
    const reportsDomain = "reports.beside.test";
    const dns = await startFixtureDnsServer({
      "_dmarc.beside-ledger.com": [{ TXT: `v=DMARC1; p=none; rua=mailto:agg@${reportsDomain}` }],
      [`beside-ledger.com._report._dmarc.${reportsDomain}`]: [{ TXT: "v=DMARC1" }],
      "beside-ledger.com": [{ TXT: "v=spf1 redirect=beside-ledger.com.spf.beside.test" }],
      "beside-ledger.com.spf.beside.test": [{ TXT: "v=spf1 ip4:192.0.2.0/24 -all" }],
    });
    try {
      // The service runs without any of these: handed over, the commands would read its settings.
      const env = {
        ...backend.env,
        DNS_NAMESERVERS: dns.address,
        DNS_TIMEOUT_MS: "300",
        REPORTS_DOMAIN: reportsDomain,
        SAFE_SPF_ZONE: "spf.beside.test",
      };
      const status = await cli(env, "domain", "status", "beside-ledger.com");
      expect(status.out).toContain("Nothing to change.");
      expect(status.code).toBe(0);
      const check = await cli(env, "spf", "check", "beside-ledger.com", "--ip", "192.0.2.7");
      expect(check.out).toMatch(/^pass: 192\.0\.2\.7/);
      expect(check.code).toBe(0);
      // And the service logged no command: they never reached it.
      expect(logged.join("\n")).not.toContain('"argv":["domain","status"');
    } finally {
      await dns.close();
    }
  });
});
