import { execFile } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** SQL as the superuser through psql, on the server at 127.0.0.1:`port`; its output trimmed. */
const psqlOn =
  (port: number) =>
  async (sql: string, database = "postgres"): Promise<string> => {
    const { stdout } = await run("psql", [
      "-X",
      "-At",
      "-h",
      "127.0.0.1",
      "-p",
      String(port),
      "-U",
      "postgres",
      "-d",
      database,
      "-c",
      sql,
    ]);
    return stdout.trim();
  };

/**
 * A PostgreSQL cluster of a test's own (initdb, pg_ctl: Debian's server binaries), on a free
 * loopback port, that the test may stop, restart or kill without touching the shared server.
 */
export interface PostgresCluster {
  port: number;
  dataDir: string;
  /** A connection URL for `database` (default postgres) as user postgres, trust authentication. */
  url(database?: string): string;
  start(): Promise<void>;
  /** `pg_ctl stop -m fast`: connections are ended, the server shuts down cleanly. */
  stop(): Promise<void>;
  /** SQL as the superuser, through psql. */
  psql(sql: string, database?: string): Promise<string>;
  /** Stops the server (if running) and removes its directory. */
  remove(): Promise<void>;
}

/** The newest installed server's binaries (Debian installs them under /usr/lib/postgresql/N/bin). */
export function postgresBinDir(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((name) => /^\d+$/.test(name))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0)
    throw new Error("no PostgreSQL server binaries under /usr/lib/postgresql: apt-get install -y postgresql");
  return join(root, versions[0]!, "bin");
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** PostgreSQL refuses to run as root: as root, its commands run as the postgres user. */
function asServerUser(command: string, args: string[]): [string, string[]] {
  return userInfo().uid === 0 ? ["runuser", ["-u", "postgres", "--", command, ...args]] : [command, args];
}

async function serverCommand(bin: string, name: string, args: string[]): Promise<string> {
  const [command, argv] = asServerUser(join(bin, name), args);
  const { stdout } = await run(command, argv, { maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

/** initdb (trust, user postgres) and start a cluster on a free port, tuned for tests (no fsync). */
export async function startPostgresCluster(
  options: { maxConnections?: number } = {},
): Promise<PostgresCluster> {
  const bin = postgresBinDir();
  const root = mkdtempSync(join(tmpdir(), "dl-pg-"));
  const dataDir = join(root, "data");
  if (userInfo().uid === 0) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    const { stdout: gid } = await run("id", ["-g", "postgres"]);
    chownSync(root, Number(stdout.trim()), Number(gid.trim()));
  }
  chmodSync(root, 0o700);
  await serverCommand(bin, "initdb", [
    "-D",
    dataDir,
    "-U",
    "postgres",
    "--auth=trust",
    "-E",
    "UTF8",
    "--no-sync",
  ]);
  const port = await freePort();
  // Appended to its postgresql.conf (the file belongs to the server's user, so written through it).
  const settings = [
    `port = ${port}`,
    "listen_addresses = '127.0.0.1'",
    `unix_socket_directories = '${root}'`,
    "fsync = off",
    "synchronous_commit = off",
    "full_page_writes = off",
    `max_connections = ${options.maxConnections ?? 100}`,
  ].join("\n");
  const conf = join(root, "extra.conf");
  writeFileSync(conf, `${settings}\n`);
  chmodSync(conf, 0o644);
  const [sh, shArgs] = asServerUser("sh", ["-c", `cat '${conf}' >> '${join(dataDir, "postgresql.conf")}'`]);
  await run(sh, shArgs);
  const log = join(root, "server.log");
  const cluster: PostgresCluster = {
    port,
    dataDir,
    url: (database = "postgres") => `postgres://postgres@127.0.0.1:${port}/${database}`,
    start: async () => {
      await serverCommand(bin, "pg_ctl", ["-D", dataDir, "-l", log, "-w", "-t", "60", "start"]);
    },
    stop: async () => {
      await serverCommand(bin, "pg_ctl", ["-D", dataDir, "-m", "fast", "-w", "-t", "60", "stop"]);
    },
    psql: psqlOn(port),
    remove: async () => {
      await serverCommand(bin, "pg_ctl", ["-D", dataDir, "-m", "immediate", "-w", "stop"]).catch(() => {});
      rmSync(root, { recursive: true, force: true });
    },
  };
  try {
    await cluster.start();
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
  return cluster;
}

/** A streaming replica of a cluster: pg_basebackup of it, started on a free port of its own. */
export interface StreamingReplica {
  port: number;
  url(database?: string): string;
  psql(sql: string, database?: string): Promise<string>;
  /** Waits until the replica has replayed everything the primary has written until now. */
  caughtUp(primary: PostgresCluster): Promise<void>;
  remove(): Promise<void>;
}

/**
 * Starts a hot standby of `primary` (pg_basebackup -R: it streams the primary's WAL from the
 * moment it starts, over loopback, with the replication connection initdb's pg_hba trusts).
 */
export async function startStreamingReplica(primary: PostgresCluster): Promise<StreamingReplica> {
  const bin = postgresBinDir();
  const root = mkdtempSync(join(tmpdir(), "dl-pg-replica-"));
  const dataDir = join(root, "data");
  if (userInfo().uid === 0) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    const { stdout: gid } = await run("id", ["-g", "postgres"]);
    chownSync(root, Number(stdout.trim()), Number(gid.trim()));
  }
  chmodSync(root, 0o700);
  await serverCommand(bin, "pg_basebackup", [
    "-h",
    "127.0.0.1",
    "-p",
    String(primary.port),
    "-U",
    "postgres",
    "-D",
    dataDir,
    "-R",
    "-X",
    "stream",
    "--no-sync",
  ]);
  const port = await freePort();
  // The primary's settings came with the copy; the last line of a setting wins.
  const conf = join(root, "extra.conf");
  writeFileSync(
    conf,
    `${[`port = ${port}`, `unix_socket_directories = '${root}'`, "hot_standby = on", "hot_standby_feedback = on"].join("\n")}\n`,
  );
  chmodSync(conf, 0o644);
  const [sh, shArgs] = asServerUser("sh", ["-c", `cat '${conf}' >> '${join(dataDir, "postgresql.conf")}'`]);
  await run(sh, shArgs);
  const log = join(root, "server.log");
  const psql = psqlOn(port);
  const replica: StreamingReplica = {
    port,
    url: (database = "postgres") => `postgres://postgres@127.0.0.1:${port}/${database}`,
    psql,
    caughtUp: async (of) => {
      const target = await of.psql("select pg_current_wal_lsn()");
      for (let attempt = 0; ; attempt++) {
        if ((await psql(`select pg_last_wal_replay_lsn() >= '${target}'::pg_lsn`)) === "t") return;
        if (attempt > 3000) throw new Error(`the replica did not replay up to ${target} in 30 s`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    remove: async () => {
      await serverCommand(bin, "pg_ctl", ["-D", dataDir, "-m", "immediate", "-w", "stop"]).catch(() => {});
      rmSync(root, { recursive: true, force: true });
    },
  };
  try {
    await serverCommand(bin, "pg_ctl", ["-D", dataDir, "-l", log, "-w", "-t", "60", "start"]);
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
  return replica;
}
