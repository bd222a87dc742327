// What the test suite needs from the system, checked first by `pnpm test` (and so by .ci/run,
// which runs the README's test line): the programs some tests run on loopback, and a PostgreSQL
// server. A missing program is installed with apt-get when this runs as root and apt-get is
// there; a local PostgreSQL cluster that is down is started. Otherwise it stops at once, naming
// the exact command to run, instead of letting the suite fail minutes later with `spawn dovecot
// ENOENT`.
//
//   node scripts/test-prerequisites.mjs            every requirement below
//   node scripts/test-prerequisites.mjs dig git    only those (test/repository/test-prerequisites.test.ts)
//
// Programs are looked for on PATH (and where Debian puts them outside a user's PATH), so a PATH
// without one is a machine without it.
import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, mkdirSync, readdirSync } from "node:fs";
import { connect } from "node:net";
import { delimiter, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pathToFileURL } from "node:url";

/** The programs the tests run, the Debian package of each, and who needs it. */
export const programs = [
  {
    name: "dovecot",
    // dovecot-core puts it in /usr/sbin, outside a user's PATH; the IMAP tests look there too.
    alsoAt: ["/usr/sbin/dovecot"],
    debianPackage: "dovecot-imapd",
    neededBy: "the IMAP intake's tests run dovecot on loopback (apps/intake/test/support/dovecot.ts)",
  },
  {
    name: "dig",
    debianPackage: "dnsutils",
    neededBy: "the DNS server's tests ask it with dig (apps/dns/test/support/dig.ts)",
  },
  {
    name: "chromium",
    debianPackage: "chromium",
    neededBy: "the dashboard's tests drive Debian's chromium through playwright-core",
  },
  {
    name: "openssl",
    debianPackage: "openssl",
    neededBy: "the SMTP and IMAP TLS tests make their certificates with it",
  },
  {
    name: "systemd-analyze",
    debianPackage: "systemd",
    neededBy: "test/repository/infra-files.test.ts verifies the systemd unit with it",
  },
  {
    name: "git",
    debianPackage: "git",
    neededBy: "test/repository/infra-files.test.ts lists the tracked files with it",
  },
];

const defaultServerUrl = "postgres://postgres@127.0.0.1:5432/postgres";

/** Where `name` is on this PATH (or at one of its other known places), or null. */
export function findProgram(program, env = process.env) {
  const places = [
    ...(env.PATH ?? "")
      .split(delimiter)
      .filter(Boolean)
      .map((dir) => join(dir, program.name)),
    ...(program.alsoAt ?? []),
  ];
  return places.find(isExecutable) ?? null;
}

function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

const say = (text) => process.stderr.write(`test prerequisites: ${text}\n`);

/** Installs the missing programs, or returns the message that stops the run. */
function provide(missing, env) {
  const packages = [...new Set(missing.map((program) => program.debianPackage))];
  const lines = missing.map(
    (program) => `  ${program.name} (Debian package ${program.debianPackage}): ${program.neededBy}`,
  );
  const install = ["apt-get", "install", "-y", "--no-install-recommends", ...packages];
  const aptGet = findProgram({ name: "apt-get" }, env);
  const root = process.getuid?.() === 0;
  if (!root || !aptGet) {
    const sudo = root ? "" : "sudo ";
    return [
      "pnpm test needs programs this machine lacks:",
      ...lines,
      aptGet
        ? "Install them, then run pnpm test again:"
        : "Install them with this machine's package manager, then run pnpm test again; on Debian or Ubuntu:",
      `  ${sudo}apt-get update && ${sudo}${install.join(" ")}`,
    ].join("\n");
  }
  say(`missing:\n${lines.join("\n")}`);
  say(`installing: apt-get update && ${install.join(" ")}`);
  const aptEnv = { ...env, DEBIAN_FRONTEND: "noninteractive" };
  for (const args of [
    ["update", "-qq"],
    [...install.slice(1), "-qq"],
  ]) {
    const ran = spawnSync(aptGet, args, { env: aptEnv, stdio: ["ignore", "ignore", "inherit"] });
    if (ran.status !== 0) {
      return `apt-get ${args.join(" ")} failed (${ran.error?.message ?? `exit ${ran.status}`}); run it by hand, then pnpm test again.`;
    }
  }
  const still = missing.filter((program) => !findProgram(program, env));
  if (still.length > 0) {
    return `installed ${packages.join(", ")}, yet ${still.map((program) => program.name).join(", ")} is still not on PATH (${env.PATH}).`;
  }
  return null;
}

/** Whether something accepts TCP connections at host:port within a second. */
function answers(host, port) {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 1000 });
    const done = (up) => {
      socket.destroy();
      resolve(up);
    };
    socket.once("connect", () => done(true));
    socket.once("timeout", () => done(false));
    socket.once("error", () => done(false));
  });
}

/** PostgreSQL answers where the tests look for it, or the message that stops the run. */
async function providePostgres(env) {
  const given = env.TEST_DATABASE_URL;
  const url = new URL(given ?? defaultServerUrl);
  const host = url.hostname;
  const port = Number(url.port || 5432);
  if (await answers(host, port)) return null;
  if (given) {
    return `PostgreSQL does not answer at ${host}:${port} (TEST_DATABASE_URL=${given}): start that server, or unset TEST_DATABASE_URL to use a local one on 127.0.0.1:5432.`;
  }
  const ctl = findProgram({ name: "pg_ctlcluster" }, env);
  const versions = existsSync("/etc/postgresql") ? readdirSync("/etc/postgresql").sort() : [];
  if (!ctl || versions.length === 0) {
    return [
      "PostgreSQL does not answer at 127.0.0.1:5432, and this machine has no local cluster to start.",
      "The tests need a server there with user postgres and trust authentication from 127.0.0.1; on Debian, as root:",
      "  apt-get update && apt-get install -y --no-install-recommends postgresql",
      "  sed -i 's#^host *all *all *127.0.0.1/32 .*#host all all 127.0.0.1/32 trust#' /etc/postgresql/*/main/pg_hba.conf",
      "  pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start",
      "Or point TEST_DATABASE_URL at a server (postgres://user@host:port/database, allowed to create databases).",
    ].join("\n");
  }
  const start = [ctl, "--skip-systemctl-redirect", versions.at(-1), "main", "start"];
  if (process.getuid?.() !== 0) {
    return `PostgreSQL does not answer at 127.0.0.1:5432. Start it, then run pnpm test again:\n  sudo ${start.join(" ")}`;
  }
  say(`PostgreSQL does not answer at 127.0.0.1:5432; starting it: ${start.join(" ")}`);
  const ran = spawnSync(start[0], start.slice(1), { stdio: ["ignore", "ignore", "inherit"] });
  if (ran.status !== 0) return `${start.join(" ")} failed (exit ${ran.status}).`;
  for (let waited = 0; waited < 30; waited++) {
    if (await answers(host, port)) return null;
    await sleep(1000);
  }
  return `started PostgreSQL (${start.join(" ")}), yet nothing answers at 127.0.0.1:5432 after 30 s.`;
}

/** Where the events broker's tests look for NATS with JetStream (test/support/nats-stream.ts). */
const defaultNatsUrl = "nats://127.0.0.1:4222";
const natsServer = "/usr/sbin/nats-server";
/** Debian's nats-server, with JetStream, on loopback, in the background. */
const natsStart = [
  "start-stop-daemon",
  "--start",
  "--oknodo",
  "--background",
  "--exec",
  natsServer,
  "--",
  "-a",
  "127.0.0.1",
  "-p",
  "4222",
  "-js",
  "-sd",
  "/var/lib/nats-server",
  "-l",
  "/var/log/nats-server.log",
];

/** NATS answers where the tests look for it, or the message that stops the run. */
async function provideNats(env) {
  const given = env.EVENTS_NATS_URL;
  const url = new URL(given ?? defaultNatsUrl);
  const host = url.hostname;
  const port = Number(url.port || 4222);
  if (await answers(host, port)) return null;
  if (given)
    return `NATS does not answer at ${host}:${port} (EVENTS_NATS_URL=${given}): start that server, or unset EVENTS_NATS_URL to use one on 127.0.0.1:4222.`;
  const root = process.getuid?.() === 0;
  const daemon = findProgram(
    { name: "start-stop-daemon", alsoAt: ["/usr/sbin/start-stop-daemon", "/sbin/start-stop-daemon"] },
    env,
  );
  if (!root || !daemon || !isExecutable(natsServer)) {
    const sudo = root ? "" : "sudo ";
    return [
      "NATS with JetStream does not answer at 127.0.0.1:4222 (the events broker's tests publish to it). Start it, then run pnpm test again:",
      ...(isExecutable(natsServer)
        ? []
        : [`  ${sudo}apt-get update && ${sudo}apt-get install -y --no-install-recommends nats-server`]),
      `  ${sudo}mkdir -p /var/lib/nats-server && ${sudo}${natsStart.join(" ")}`,
    ].join("\n");
  }
  say(`NATS does not answer at 127.0.0.1:4222; starting it: ${natsStart.join(" ")}`);
  mkdirSync("/var/lib/nats-server", { recursive: true });
  const ran = spawnSync(daemon, natsStart.slice(1), { stdio: ["ignore", "ignore", "inherit"] });
  if (ran.status !== 0) return `${natsStart.join(" ")} failed (exit ${ran.status}).`;
  for (let waited = 0; waited < 30; waited++) {
    if (await answers(host, port)) return null;
    await sleep(1000);
  }
  return `started NATS (${natsStart.join(" ")}), yet nothing answers at 127.0.0.1:4222 after 30 s.`;
}

/**
 * Checks (and provides) the named requirements, every one when none is named: the program names
 * above, "postgresql" and "nats". Returns the message that stops the run, or null when all is there.
 */
export async function checkPrerequisites(names = [], env = process.env) {
  const known = [...programs.map((program) => program.name), "postgresql", "nats"];
  const unknown = names.filter((name) => !known.includes(name));
  if (unknown.length > 0) return `unknown requirement ${unknown.join(", ")}: known are ${known.join(", ")}`;
  const wanted = (name) => names.length === 0 || names.includes(name);
  const missing = programs.filter((program) => wanted(program.name) && !findProgram(program, env));
  const stop = missing.length > 0 ? provide(missing, env) : null;
  if (stop) return stop;
  const postgres = wanted("postgresql") ? await providePostgres(env) : null;
  if (postgres) return postgres;
  return wanted("nats") ? provideNats(env) : null;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const stop = await checkPrerequisites(process.argv.slice(2));
  if (stop) {
    process.stderr.write(`${stop}\n`);
    process.exit(1);
  }
}
