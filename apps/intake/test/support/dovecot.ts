import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createConnection, createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";

/**
 * A real IMAP server for tests: Debian's dovecot (`dovecot-imapd`), run in the foreground with a
 * throwaway configuration and mail directory, listening on loopback only. Plaintext login and no
 * TLS, or, given a certificate, TLS required for every login: STARTTLS on `port`, imaps on `tlsPort`.
 */
export interface TestDovecot {
  host: string;
  port: number;
  user: string;
  password: string;
  /** imap://user:password@127.0.0.1:port/ */
  url: string;
  /** imaps://user:password@127.0.0.1:tlsPort/ when started with a certificate. */
  tlsUrl: string | null;
  /** Dovecot's log: its login lines say whether the session used TLS. */
  log(): Promise<string>;
  /** Kills the server and every connection it holds; `start()` brings it back on the same port and mail. */
  kill(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server and deletes its directory. */
  close(): Promise<void>;
}

const dovecotBinary = existsSync("/usr/sbin/dovecot") ? "/usr/sbin/dovecot" : "dovecot";
const user = "reports";
const password = "secret-imap-password";
// Dovecot refuses mail access as root, so a test run as root hands the mail to `nobody`.
const nobody = 65534;

export async function startTestDovecot(
  options: { port?: number; withoutIdle?: boolean; tls?: { certPath: string; keyPath: string } } = {},
): Promise<TestDovecot> {
  const dir = await mkdtemp(join(tmpdir(), "dl-dovecot-"));
  const port = options.port ?? (await freePort());
  const tlsPort = options.tls ? await freePort() : 0;
  const asRoot = process.getuid?.() === 0;
  const uid = asRoot ? nobody : (process.getuid?.() ?? nobody);
  const gid = asRoot ? nobody : (process.getgid?.() ?? nobody);
  const home = join(dir, "home");
  for (const sub of ["run", "state", "home"]) await mkdir(join(dir, sub), { recursive: true });
  if (asRoot) {
    // Dovecot's auth process runs as the `dovecot` user and must read the passwd file.
    await chmod(dir, 0o755);
    await chown(home, uid, gid);
  }
  // Without root, dovecot's internal and login processes run as the user running the tests.
  const runAs = asRoot
    ? {}
    : { user: userInfo().username, group: execFileSync("id", ["-gn"], { encoding: "utf8" }).trim() };
  await writeFile(join(dir, "passwd"), `${user}:{PLAIN}${password}:${uid}:${gid}::${home}::\n`);
  const config = [
    `base_dir = ${join(dir, "run")}`,
    `state_dir = ${join(dir, "state")}`,
    `log_path = ${join(dir, "dovecot.log")}`,
    "protocols = imap",
    "listen = 127.0.0.1",
    ...(options.tls
      ? ["ssl = required", `ssl_cert = <${options.tls.certPath}`, `ssl_key = <${options.tls.keyPath}`]
      : ["ssl = no", "disable_plaintext_auth = no"]),
    "auth_mechanisms = plain login",
    `mail_location = maildir:${home}/Maildir`,
    `first_valid_uid = ${Math.min(uid, 500)}`,
    ...(runAs.user
      ? [
          `default_internal_user = ${runAs.user}`,
          `default_internal_group = ${runAs.group}`,
          `default_login_user = ${runAs.user}`,
        ]
      : []),
    ...(options.withoutIdle ? ["imap_capability = IMAP4rev1 LITERAL+ UIDPLUS MOVE NAMESPACE"] : []),
    `passdb {\n  driver = passwd-file\n  args = ${join(dir, "passwd")}\n}`,
    `userdb {\n  driver = passwd-file\n  args = ${join(dir, "passwd")}\n}`,
    // chroot needs root.
    ...(asRoot ? [] : ["service anvil {\n  chroot =\n}"]),
    `service imap-login {\n${asRoot ? "" : "  chroot =\n"}  inet_listener imap {\n    address = 127.0.0.1\n    port = ${port}\n  }\n  inet_listener imaps {\n    address = 127.0.0.1\n    port = ${tlsPort}\n${options.tls ? "    ssl = yes\n" : ""}  }\n}`,
    "",
  ].join("\n");
  const configPath = join(dir, "dovecot.conf");
  await writeFile(configPath, config);

  let child: ChildProcess | null = null;
  const start = async () => {
    // Its own process group, so that kill() takes the login and mail processes down with the master.
    const started = spawn(dovecotBinary, ["-F", "-c", configPath], {
      stdio: ["ignore", "ignore", "pipe"],
      detached: true,
    });
    let stderr = "";
    started.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child = started;
    // A test run that dies must not leave the server behind.
    const killOnExit = () => killGroup(started);
    process.once("exit", killOnExit);
    started.once("exit", () => process.off("exit", killOnExit));
    const deadline = Date.now() + 15_000;
    while (!(await accepts(port))) {
      if (started.exitCode !== null || Date.now() > deadline) {
        const log = await readFile(join(dir, "dovecot.log"), "utf8").catch(() => "");
        killGroup(started);
        throw new Error(`dovecot did not start on port ${port}: ${stderr}\n${log}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const kill = async () => {
    const running = child;
    child = null;
    if (!running) return;
    // Like a crash or a cut cable: every connection ends at once. (On SIGTERM, dovecot's mail
    // processes keep their connections for up to ten seconds.)
    const exited =
      running.exitCode !== null || running.signalCode !== null
        ? Promise.resolve()
        : new Promise((resolve) => running.once("exit", resolve));
    killGroup(running);
    await exited;
    const deadline = Date.now() + 10_000;
    while ((await accepts(port)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  };

  await start();
  return {
    host: "127.0.0.1",
    port,
    user,
    password,
    url: `imap://${user}:${password}@127.0.0.1:${port}/`,
    tlsUrl: options.tls ? `imaps://${user}:${password}@127.0.0.1:${tlsPort}/` : null,
    log: () => readFile(join(dir, "dovecot.log"), "utf8").catch(() => ""),
    kill,
    start,
    async close() {
      await kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // already gone
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}
