// Builds the dashboard (apps/web) with Vite into apps/web/dist, which the API process serves at /.
// `pnpm build` runs it; `pnpm start` runs it with --if-stale (scripts/start.mjs's check is the
// same); the tests' global setup once per run.
//
// After Vite: every JS and CSS file gets .gz and .br copies beside it (served to clients that
// take them, so the bytes counted here are the bytes sent), and the first load (what index.html
// loads: its scripts, preloads and styles) is printed gzipped, against the budget of 250 KB. Past
// the budget the build fails. dist/build-info.json records a hash of the sources, so that a
// build of the same sources is known to be current.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

const root = fileURLToPath(new URL("../", import.meta.url));
const web = join(root, "apps/web");
const dist = join(web, "dist");
const info = join(dist, "build-info.json");
export const firstLoadBudgetBytes = 250 * 1024;

function filesBelow(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesBelow(path) : [path];
  });
}

/** A hash of everything the build reads from apps/web: a change to any of it makes the build stale. */
export function sourcesHash() {
  const inputs = [
    ...["index.html", "vite.config.ts", "package.json", "tsconfig.json"].map((name) => join(web, name)),
    ...filesBelow(join(web, "src")),
    ...filesBelow(join(web, "public")),
  ]
    .filter((path) => existsSync(path))
    .sort();
  const hash = createHash("sha256");
  for (const path of inputs)
    hash.update(relative(web, path)).update("\0").update(readFileSync(path)).update("\0");
  return hash.digest("hex");
}

/** Whether dist/ holds a build of the sources as they are now. */
export function webBuildIsCurrent() {
  if (!existsSync(info) || !existsSync(join(dist, "index.html"))) return false;
  try {
    return JSON.parse(readFileSync(info, "utf8")).sources === sourcesHash();
  } catch {
    return false;
  }
}

const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;

export function buildWeb() {
  const sources = sourcesHash();
  const vite = join(web, "node_modules/vite/bin/vite.js");
  if (!existsSync(vite)) {
    throw new Error("apps/web's Vite is not installed: run `pnpm install` first.");
  }
  const built = spawnSync(process.execPath, [vite, "build", "--logLevel", "warn"], {
    cwd: web,
    stdio: "inherit",
  });
  if (built.status !== 0) throw new Error(`the dashboard's build failed (vite exit ${built.status})`);

  const sizes = new Map();
  for (const path of filesBelow(join(dist, "assets"))) {
    if (!/\.(js|css)$/.test(path)) continue;
    const bytes = readFileSync(path);
    const gzipped = gzipSync(bytes, { level: 9 });
    writeFileSync(`${path}.gz`, gzipped);
    writeFileSync(
      `${path}.br`,
      brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }),
    );
    sizes.set(`/${relative(dist, path)}`, { raw: bytes.length, gzip: gzipped.length });
  }
  const index = readFileSync(join(dist, "index.html"), "utf8");
  const firstLoad = [...index.matchAll(/(?:src|href)="(\/assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]);
  const firstGzip = firstLoad.reduce((sum, path) => sum + (sizes.get(path)?.gzip ?? 0), 0);
  const allGzip = [...sizes.values()].reduce((sum, size) => sum + size.gzip, 0);
  console.log("dashboard build (apps/web/dist), gzipped:");
  for (const [path, size] of [...sizes].sort((a, b) => b[1].gzip - a[1].gzip)) {
    console.log(
      `  ${path.padEnd(44)} ${kib(size.gzip).padStart(9)}${firstLoad.includes(path) ? "  (first load)" : ""}`,
    );
  }
  console.log(
    `  first load: ${kib(firstGzip)} of JavaScript and CSS (budget ${kib(firstLoadBudgetBytes)}); everything, loaded as views need it: ${kib(allGzip)}`,
  );
  writeFileSync(
    info,
    `${JSON.stringify({ sources, firstLoadGzipBytes: firstGzip, allGzipBytes: allGzip, firstLoad }, null, 2)}\n`,
  );
  if (firstGzip > firstLoadBudgetBytes) {
    throw new Error(
      `the dashboard's first load is ${kib(firstGzip)} gzipped, past its budget of ${kib(firstLoadBudgetBytes)}`,
    );
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    if (process.argv.includes("--if-stale") && webBuildIsCurrent()) {
      console.log("dashboard build is current (apps/web/dist)");
    } else {
      buildWeb();
    }
  } catch (error) {
    console.error(`error: ${error.message}`);
    process.exit(1);
  }
}
