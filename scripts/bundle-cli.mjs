// The production CLI as a bundle (apps/cli/bundle/dmarc-ledger.mjs), made by `pnpm build`
// from the JavaScript it has just emitted (the dist/ of every package, picked by the
// "dmarc-ledger-dist" condition), so the bundle runs what the per-package build runs.
//
// Why: `tenant list` loaded ~500 ES modules (Kysely alone 287 files, zod 99), a third of a
// second of CPU spent resolving, reading and compiling them one by one. Bundled, the few files
// load at once, and V8 compiles only the functions that run.
//
// Bundled: our packages and the pure-JavaScript libraries on the short commands' path. The rest
// stays external, loaded from node_modules as usual: PGlite finds its WebAssembly and data files
// beside its own module, pino starts its transports from files, and the service's libraries load
// only for `start`. An external must resolve from apps/cli/bundle/, so it must be a dependency
// of @dmarc-ledger/cli itself (pnpm links only a package's own dependencies): the build checks
// that and names the missing ones. The bundle sits beside src/ and dist/ so that what the
// sources find relative to their own file one level up (the CLI's package.json) is found too.
//
// Split at the dynamic imports (`splitting`): the modules that a command loads lazily stay lazy,
// and so do the externals they import; a single file would import every external up front.
// A module that starts a worker thread from a file beside its own needs that file built as an
// entry point of its own here (parse-worker.mjs, import-thread.mjs): the outputs all share one directory.
import { readFileSync, rmSync } from "node:fs";
import { builtinModules } from "node:module";
import { build } from "esbuild";

const bundled = ["kysely", "kysely-pglite-dialect", "zod", "commander"];
const isBundled = (specifier) =>
  specifier.startsWith("@dmarc-ledger/") ||
  bundled.some((name) => specifier === name || specifier.startsWith(`${name}/`));
const packageName = (specifier) =>
  specifier
    .split("/")
    .slice(0, specifier.startsWith("@") ? 2 : 1)
    .join("/");

export const bundleDir = "apps/cli/bundle";

/**
 * Externals loaded by name at run time, which the bundler cannot see: pino's pretty printer; the
 * source-IP resolver's ASN and country databases (packages/source-names, found by
 * require.resolve from the module, so from the bundle's directory).
 */
const loadedByName = ["pino-pretty", "@ip-location-db/asn", "@ip-location-db/geo-whois-asn-country-mmdb"];

/**
 * Builds the bundle; returns the externals the CLI package does not declare (empty when fine).
 * By default from the build output into apps/cli/bundle/; `fromSources` bundles the TypeScript
 * sources themselves (esbuild strips the types) into `outdir`, which must sit in apps/cli/ too:
 * what `pnpm start` runs (scripts/start.mjs).
 */
export async function bundleCli({ fromSources = false, outdir = bundleDir } = {}) {
  const externals = new Set(loadedByName);
  rmSync(outdir, { recursive: true, force: true });
  await build({
    entryPoints: fromSources
      ? {
          "dmarc-ledger": "apps/cli/src/main.ts",
          "parse-worker": "packages/intake/src/parse-worker.ts",
          "import-thread": "apps/cli/src/commands/import-thread.ts",
        }
      : {
          "dmarc-ledger": "apps/cli/dist/main.js",
          // Started by file as a worker thread (packages/intake, parse-pool.ts), which looks for it
          // beside its own module: every output goes to this one directory.
          "parse-worker": "packages/intake/dist/parse-worker.js",
          // The same for the import's threads (apps/cli, import-threads.ts).
          "import-thread": "apps/cli/dist/commands/import-thread.js",
        },
    outdir,
    outExtension: { ".js": ".mjs" },
    chunkNames: "chunk-[hash]",
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    conditions: fromSources ? [] : ["dmarc-ledger-dist"],
    sourcemap: true,
    // commander is CommonJS and requires node's own modules: `require`, which an ES module lacks.
    banner: {
      js: 'import { createRequire as __bundleRequire } from "node:module"; const require = __bundleRequire(import.meta.url);',
    },
    logLevel: "warning",
    plugins: [
      {
        name: "externals",
        setup(build) {
          build.onResolve({ filter: /^[^./]/ }, ({ path }) => {
            if (path.startsWith("node:") || builtinModules.includes(path)) return { external: true };
            if (isBundled(path)) return undefined;
            externals.add(packageName(path));
            return { external: true };
          });
        },
      },
    ],
  });
  const manifest = JSON.parse(readFileSync("apps/cli/package.json", "utf8"));
  return [...externals].filter((name) => !(name in (manifest.dependencies ?? {}))).sort();
}
