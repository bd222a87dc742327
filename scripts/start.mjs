// `pnpm start`: the service from the sources, run as plain node runs the production bundle. The
// CLI is bundled from its TypeScript sources by esbuild (about half a second: scripts/bundle-cli.mjs)
// into apps/cli/.start-<pid>/, then run in this process. Through tsx (`node --import tsx`), the same
// start held about 75 MB more while idle (tsx's module hooks run on a thread of their own, with a
// heap of their own, and every source file is compiled as it loads) and took a second or more
// longer to load its modules: docs/operations.md, "Memory and start-up time".
import { spawn } from "node:child_process";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { stop } from "esbuild";
import { bundleCli } from "./bundle-cli.mjs";

// In apps/cli/ itself, as the production bundle: what the sources find one level up from their
// own file (the CLI's package.json) is found, and so are its dependencies.
const cliDir = fileURLToPath(new URL("../apps/cli/", import.meta.url));
const prefix = ".start-";

// The bundles of earlier starts whose process is gone (a start killed outright leaves its own).
for (const name of readdirSync(cliDir)) {
  if (name.startsWith(prefix) && !isRunning(Number(name.slice(prefix.length))))
    rmSync(join(cliDir, name), { recursive: true, force: true });
}
const outdir = join(cliDir, `${prefix}${process.pid}`);
// The dashboard is built first when its build is missing or older than its sources (a hash of
// them, a few milliseconds when current), beside the bundling. Its lines go to stderr: stdout
// carries JSON log lines only. The child ends before the service starts in this process.
const dashboard = new Promise((resolve) => {
  const build = spawn(
    process.execPath,
    [fileURLToPath(new URL("./build-web.mjs", import.meta.url)), "--if-stale"],
    {
      stdio: ["ignore", 2, 2],
    },
  );
  build.once("error", () => resolve(false));
  build.once("close", (code) => resolve(code === 0));
});
const undeclared = await bundleCli({ fromSources: true, outdir });
// esbuild's service process is for building, not for the service's lifetime.
await stop();
if (!(await dashboard))
  console.error("The dashboard could not be built (see above); the API starts without it.");
if (undeclared.length > 0) {
  console.error(
    `The CLI imports these packages, which @dmarc-ledger/cli does not depend on, so they would not resolve from apps/cli/:\n  ${undeclared.join("\n  ")}`,
  );
  process.exit(1);
}
process.once("exit", () => rmSync(outdir, { recursive: true, force: true }));
// The CLI's main reads its arguments from process.argv, after this script's path: `start`.
await import(pathToFileURL(join(outdir, "dmarc-ledger.mjs")).href);

function isRunning(pid) {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}
