/**
 * `pnpm bench`: runs every benchmark entry point (packages/<name>/bench/main.ts, apps/<name>/bench/main.ts
 * and test/bench/*.bench.ts), each in its own process so that peak RSS figures are its own.
 * Each entry point prints its figures and ratios against a baseline it measures in the same run.
 * `pnpm bench NAME` runs only the entries whose path contains NAME.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));
const filter = process.argv[2];

function entryPoints(): string[] {
  const found: string[] = [];
  for (const group of ["packages", "apps"]) {
    for (const name of readdirSync(join(root, group))) {
      const main = join(root, group, name, "bench", "main.ts");
      if (existsSync(main)) found.push(main);
    }
  }
  for (const file of readdirSync(join(root, "test", "bench"))) {
    if (file.endsWith(".bench.ts")) found.push(join(root, "test", "bench", file));
  }
  // Matched against the path inside the repository: the checkout's own path may contain NAME.
  return found.filter((path) => !filter || relative(root, path).includes(filter));
}

let failed = 0;
for (const entry of entryPoints()) {
  const name = relative(root, entry);
  console.log(`\n=== ${name}`);
  const result = spawnSync(process.execPath, ["--import", "tsx", "--expose-gc", entry], {
    cwd: root,
    stdio: "inherit",
  });
  if (result.status !== 0) {
    failed++;
    console.log(`=== ${name} failed (exit ${result.status})`);
  }
}
process.exit(failed ? 1 : 0);
