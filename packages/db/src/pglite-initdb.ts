import { spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from "node:fs";
import { cp } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";

/** The file PostgreSQL writes into a data directory it made; PGlite runs initdb without it. */
const versionFile = "PG_VERSION";
const stagingPrefix = ".initdb-";

/**
 * Makes a fresh PGlite database in `dataDir` when it holds none yet (no PG_VERSION), so that this
 * process opens a database that exists:
 *
 * - by copying `template`, the database a first start or `pnpm install` left in the user's
 *   cache (pgliteTemplateDir): a fraction of a second;
 * - else by PGlite's initdb in a child process, which then leaves its database as the template.
 *   In a child because PGlite's initdb runs a second PostgreSQL instance in the opening process,
 *   which kept about 450 MB more resident for as long as it ran (a first `start` idled at about
 *   900 MB); and because the child can compile PGlite with V8's baseline compiler only
 *   (`--liftoff-only`): initdb took 3.7 s with the optimising one here, 2.3 s without, the
 *   service itself keeping the optimising compiler (docs/operations.md, "Memory and start-up time").
 *
 * The database is made in a directory inside `dataDir` (writable wherever `dataDir` is, and on
 * the same file system), then its entries are moved in, PG_VERSION last: a start cut short finds
 * no PG_VERSION and makes the database again, replacing the entries it left. The caller holds the
 * data directory's lock.
 */
export async function createPgliteDatabase(
  dataDir: string,
  template: string | null = pgliteTemplateDir(),
): Promise<void> {
  if (existsSync(join(dataDir, versionFile))) return;
  // The staging directory of a start cut short.
  for (const name of readdirSync(dataDir)) {
    if (name.startsWith(stagingPrefix)) rmSync(join(dataDir, name), { recursive: true, force: true });
  }
  const staging = mkdtempSync(join(dataDir, stagingPrefix));
  try {
    if (template && existsSync(join(template, versionFile))) {
      // On libuv's threads: the opening process loads its modules meanwhile.
      await cp(template, staging, { recursive: true });
    } else {
      await runInitdb(staging);
      if (template) keepAsTemplate(staging, template);
    }
    if (!existsSync(join(staging, versionFile)))
      throw new Error(`initdb made no ${versionFile} in ${staging}`);
    const entries = readdirSync(staging).filter((name) => name !== versionFile);
    for (const name of [...entries, versionFile]) {
      const target = join(dataDir, name);
      rmSync(target, { recursive: true, force: true });
      renameSync(join(staging, name), target);
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * Where a fresh database made by PGlite's initdb is kept, to be copied into each new data
 * directory: `$XDG_CACHE_HOME/dmarc-ledger/pglite-<PGlite's version>` (`~/.cache/…` by default),
 * so that a PGlite upgrade makes its own. Null when there is no home directory to cache in.
 */
export function pgliteTemplateDir(env: NodeJS.ProcessEnv = process.env): string | null {
  let cache = env.XDG_CACHE_HOME;
  if (!cache) {
    const home = homedir();
    if (!home) return null;
    cache = join(home, ".cache");
  }
  return join(cache, "dmarc-ledger", `pglite-${pgliteVersion()}`);
}

/** Makes the template now, if there is none (`pnpm install`'s postinstall: scripts/pglite-template.mjs). */
export async function makePgliteTemplate(): Promise<string | null> {
  const template = pgliteTemplateDir();
  if (!template || existsSync(join(template, versionFile))) return template;
  mkdirSync(join(template, ".."), { recursive: true });
  const staging = mkdtempSync(`${template}.making-`);
  try {
    await runInitdb(staging);
    keepAsTemplate(staging, template);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return template;
}

function pgliteVersion(): string {
  const manifest = new URL("../package.json", import.meta.resolve("@electric-sql/pglite"));
  return String(JSON.parse(readFileSync(manifest, "utf8")).version);
}

/**
 * Copies a database just made into the template's place, whole or not at all: copied beside it,
 * then renamed in (another process doing the same at once wins, and this copy goes). Best effort:
 * a cache that cannot be written only means the next first start runs initdb too.
 */
function keepAsTemplate(made: string, template: string): void {
  let copy: string | null = null;
  try {
    mkdirSync(join(template, ".."), { recursive: true });
    copy = mkdtempSync(`${template}.copy-`);
    cpSync(made, copy, { recursive: true });
    renameSync(copy, template);
    copy = null;
  } catch {
    // Read-only or full: no template this time.
  } finally {
    if (copy) rmSync(copy, { recursive: true, force: true });
  }
}

// In the child: PGlite by the URL this process resolves (the child has no module resolution of
// ours, and works the same from the sources, the build output and the CLI bundle).
const initdbScript = `
const [pgliteUrl, dataDir] = process.argv.slice(1);
const { PGlite } = await import(pgliteUrl);
const pg = await PGlite.create(dataDir);
await pg.close();
`;

async function runInitdb(dataDir: string): Promise<void> {
  const pgliteUrl = import.meta.resolve("@electric-sql/pglite");
  try {
    await runNode(["--liftoff-only", "--input-type=module", "-e", initdbScript, pgliteUrl, dataDir]);
  } catch (baselineFailure) {
    // The baseline compiler cannot compile everything on every CPU (see pglite-wasm.ts): once
    // more with the optimising one, in a directory emptied of what the first try left.
    for (const name of readdirSync(dataDir)) rmSync(join(dataDir, name), { recursive: true, force: true });
    try {
      await runNode(["--input-type=module", "-e", initdbScript, pgliteUrl, dataDir]);
    } catch (failure) {
      throw new Error(
        `${(failure as Error).message} (with --liftoff-only: ${(baselineFailure as Error).message})`,
      );
    }
  }
}

function runNode(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-4096);
    });
    child.once("error", reject);
    child.once("close", (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`PGlite's initdb failed (${signal ?? `exit ${code}`}): ${stderr.trim()}`));
    });
  });
}
