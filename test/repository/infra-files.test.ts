/**
 * infra/: what can be checked of the image, the compose file and the systemd unit on a machine
 * without a Docker engine (infra/README.md says what else was checked, and how).
 * - the build context: Docker's own .dockerignore rules (@balena/dockerignore, a port of moby's
 *   matcher) keep the host's data directory, .git, node_modules and build output out, and let
 *   every tracked file in;
 * - the Dockerfile: the user the service runs as owns the default data directory, and the image
 *   declares no health check that its processes without HTTP would fail;
 * - the compose file: every service restarts, the ports infra/README.md's host commands use are
 *   published (on loopback), and each of our processes is checked on a port it serves;
 * - the unit: `systemd-analyze verify`.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import dockerignore from "@balena/dockerignore";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const root = fileURLToPath(new URL("../../", import.meta.url));
const read = (path: string) => readFileSync(`${root}${path}`, "utf8");

describe("the image's build context (.dockerignore)", () => {
  // A CommonJS module whose types declare an ES default export: its factory is also its `default`.
  const rules = dockerignore.default().add(read(".dockerignore").split("\n"));

  it("leaves out what a host made: data, .git, node_modules, build output", () => {
    for (const path of [
      "data/dmarc-ledger.lock",
      "data/base/1/1259",
      ".git/HEAD",
      "node_modules/.pnpm/lock.yaml",
      "packages/db/node_modules/kysely/package.json",
      "packages/db/dist/index.js",
      "apps/cli/bundle/dmarc-ledger.mjs",
      ".build/packages/db/src/index.js",
      "some/other/data/PG_VERSION",
    ]) {
      expect(rules.ignores(path), path).toBe(true);
    }
  });

  it("takes every tracked file: the sources, the lock file, the workspace manifests", () => {
    const tracked = execFileSync("git", ["ls-files"], { cwd: root, encoding: "utf8" }).split("\n");
    const left = tracked.filter((path) => path && rules.ignores(path));
    expect(left).toEqual([]);
    expect(tracked).toContain("pnpm-lock.yaml");
  });
});

describe("infra/Dockerfile", () => {
  const stages = read("infra/Dockerfile")
    .split("\n")
    .filter((line) => line.trim() && !line.trimStart().startsWith("#"))
    .join("\n")
    .split(/^FROM /m)
    .slice(1);
  const final = stages.at(-1)!;

  it("gives the default data directory to the user the service runs as", () => {
    const workdir = /^WORKDIR (\S+)$/m.exec(final)?.[1];
    const user = /^USER (\S+)$/m.exec(final)?.[1];
    expect(workdir).toBe("/srv/dmarc-ledger");
    expect(user).toBe("node");
    // No DMARC_LEDGER_DATA_DIR in the image: the default, ./data under the working directory.
    expect(final).not.toContain("DMARC_LEDGER_DATA_DIR");
    const owned = final.indexOf("chown node:node data");
    expect(owned).toBeGreaterThan(-1);
    expect(owned).toBeLessThan(final.indexOf("USER node"));
    expect(final).toContain('VOLUME ["/srv/dmarc-ledger/data"]');
  });

  it("declares no health check, which the projector (no HTTP) would fail", () => {
    expect(stages.join("\n")).not.toMatch(/^HEALTHCHECK /m);
  });
});

interface ComposeService {
  image?: string;
  restart?: string;
  ports?: string[];
  command?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test?: string[]; disable?: boolean };
}

describe("infra/docker-compose.yml", () => {
  const compose = parse(read("infra/docker-compose.yml"), { merge: true }) as {
    services: Record<string, ComposeService>;
  };
  const services = Object.entries(compose.services);
  const ours = services.filter(([, service]) => service.image === "dmarc-ledger");

  it("restarts every service", () => {
    expect(services.length).toBeGreaterThan(0);
    for (const [name, service] of services) expect(service.restart, name).toBe("unless-stopped");
  });

  it("publishes, on the host's loopback, the stores infra/README.md's commands reach from the host", () => {
    const readme = read("infra/README.md");
    const hostPorts = [...readme.matchAll(/@localhost:(\d+)\/|localhost:(\d+)\?/g)].map(
      (match) => match[1] ?? match[2],
    );
    expect(hostPorts.sort()).toEqual(["2113", "5432"]);
    expect(compose.services.postgres?.ports).toEqual(["127.0.0.1:5432:5432"]);
    expect(compose.services.kurrentdb?.ports).toEqual(["127.0.0.1:2113:2113"]);
  });

  it("checks each of our processes on the port it serves /healthz on", () => {
    expect(ours.map(([name]) => name).sort()).toEqual(["api", "intake", "projector"]);
    for (const [name, service] of ours) {
      const env = service.environment ?? {};
      // The API serves /healthz on PORT; the processes without an API on METRICS_PORT.
      const served = service.command?.[0] === "apps/api/dist/main.js" ? env.PORT : env.METRICS_PORT;
      expect(served, `${name} serves HTTP`).toMatch(/^\d+$/);
      expect(service.healthcheck?.disable, name).toBeUndefined();
      expect(service.healthcheck?.test?.join(" "), name).toContain(`http://127.0.0.1:${served}/healthz`);
    }
  });
});

describe("infra/dmarc-ledger.service", () => {
  it("passes systemd-analyze verify", () => {
    // Verify checks that ExecStart's program exists: the node running this test stands in for
    // the unit's /usr/bin/node, wherever this machine has it.
    const dir = mkdtempSync(join(tmpdir(), "dl-unit-"));
    const unit = join(dir, "dmarc-ledger.service");
    writeFileSync(
      unit,
      read("infra/dmarc-ledger.service").replace(
        "ExecStart=/usr/bin/node ",
        `ExecStart=${process.execPath} `,
      ),
    );
    const verified = spawnSync("systemd-analyze", ["verify", unit], { encoding: "utf8" });
    rmSync(dir, { recursive: true, force: true });
    expect(verified.error, "systemd-analyze (Debian's systemd package) must be installed").toBeUndefined();
    expect(verified.stderr).toBe("");
    expect(verified.status).toBe(0);
  });
});
