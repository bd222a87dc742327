/**
 * The README's test line on a machine without what the suite runs (dovecot, dig, chromium, …):
 * `pnpm test` first runs scripts/test-prerequisites.mjs, which installs a missing program with
 * apt-get (as root) or stops at once naming the command to run. Here a PATH without the program
 * stands for such a machine, and an apt-get of the test's own, first on that PATH, records what
 * it was asked and puts the program there, as the real one would.
 */
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const script = join(root, "scripts/test-prerequisites.mjs");

function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { env, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      err += chunk;
    });
    child.once("error", reject);
    child.once("close", (code) => resolve({ code: code ?? -1, err }));
  });
}

describe("pnpm test's prerequisites", () => {
  const dirs: string[] = [];
  const emptyBin = () => {
    const dir = mkdtempSync(join(tmpdir(), "dl-prereq-"));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("are checked before anything else by the README's test line", () => {
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    expect(manifest.scripts.test).toMatch(/^node scripts\/test-prerequisites\.mjs && /);
    // .ci/run runs that line itself (then the first-step tests again on the other Node major).
    expect(readFileSync(join(root, ".ci/run"), "utf8")).toContain(
      "npm i -g pnpm@9.15.9 && pnpm install && pnpm test",
    );
    expect(readFileSync(join(root, "README.md"), "utf8")).toContain(
      "npm i -g pnpm@9.15.9 && pnpm install && pnpm test",
    );
  });

  it("installs a missing program with apt-get when run as root, or names the command with sudo", async () => {
    const bin = emptyBin();
    const log = join(bin, "apt-get.log");
    writeFileSync(
      join(bin, "apt-get"),
      [
        "#!/bin/sh",
        `echo "$DEBIAN_FRONTEND $*" >> ${log}`,
        `if [ "$1" = install ]; then printf '#!/bin/sh\\n' > ${join(bin, "dig")}; /bin/chmod +x ${join(bin, "dig")}; fi`,
        "",
      ].join("\n"),
    );
    chmodSync(join(bin, "apt-get"), 0o755);
    const result = await run(["dig"], { PATH: bin });
    if (process.getuid?.() === 0) {
      expect(result.err).toContain("dig (Debian package dnsutils)");
      expect(result.code, result.err).toBe(0);
      expect(readFileSync(log, "utf8").trim().split("\n")).toEqual([
        "noninteractive update -qq",
        "noninteractive install -y --no-install-recommends dnsutils -qq",
      ]);
    } else {
      expect(result.code).toBe(1);
      expect(result.err).toContain(
        "sudo apt-get update && sudo apt-get install -y --no-install-recommends dnsutils",
      );
    }
  });

  it("without apt-get, stops naming each missing program, why, and the command that installs it", async () => {
    const result = await run(["dig", "chromium"], { PATH: emptyBin() });
    expect(result.code).toBe(1);
    expect(result.err).toContain("pnpm test needs programs this machine lacks:");
    expect(result.err).toContain("dig (Debian package dnsutils): the DNS server's tests");
    expect(result.err).toContain("chromium (Debian package chromium)");
    expect(result.err).toContain("apt-get install -y --no-install-recommends dnsutils chromium");
  });

  it("stops when the PostgreSQL that TEST_DATABASE_URL names does not answer, naming it", async () => {
    const closed = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const url = `postgres://postgres@127.0.0.1:${closed}/postgres`;
    const result = await run(["postgresql"], { PATH: emptyBin(), TEST_DATABASE_URL: url });
    expect(result.code).toBe(1);
    expect(result.err).toContain(
      `PostgreSQL does not answer at 127.0.0.1:${closed} (TEST_DATABASE_URL=${url})`,
    );
  });

  it("stops when the NATS that EVENTS_NATS_URL names does not answer, naming it", async () => {
    const closed = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const url = `nats://127.0.0.1:${closed}`;
    const result = await run(["nats"], { PATH: emptyBin(), EVENTS_NATS_URL: url });
    expect(result.code).toBe(1);
    expect(result.err).toContain(`NATS does not answer at 127.0.0.1:${closed} (EVENTS_NATS_URL=${url})`);
  });

  it("passes when everything is there", async () => {
    const result = await run([], process.env);
    expect(result.err).toBe("");
    expect(result.code).toBe(0);
  });
});
