// `pnpm build`: compiles every package and app to JavaScript in its own dist/, for production
// processes run with plain node (see docs/operations.md, "Build").
//
// One TypeScript program over all sources (workspace imports resolve to src/*.ts through the
// "types" export condition), emitted to .build/ and then moved to each package's dist/: no
// per-package tsconfig or project references to keep in step with the dependencies.
//
// The output is used only when node runs with --conditions=dmarc-ledger-dist: every
// package.json's exports say {"types": src, "dmarc-ledger-dist": dist, "default": src}, so
// that development tools (tsx, vitest) never pick up a stale build.
//
// Last, the CLI is bundled from that output (scripts/bundle-cli.mjs): the production entry point
// apps/cli/bundle/dmarc-ledger.mjs, which starts a short command in a fraction of the time.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { buildWeb } from "./build-web.mjs";
import { bundleCli, bundleDir } from "./bundle-cli.mjs";

// `--no-check` emits without type-checking: the same JavaScript (every file is compiled on its own,
// isolatedModules), in 5 s of CPU instead of 12. For the tests, which `pnpm typecheck` precedes.
const check = !process.argv.includes("--no-check");
const staging = ".build";
rmSync(staging, { recursive: true, force: true });
execFileSync(
  process.execPath,
  ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json", ...(check ? [] : ["--noCheck"])],
  { stdio: "inherit" },
);

const unbuildable = [];
for (const group of ["packages", "apps"]) {
  for (const name of readdirSync(group)) {
    const packageDir = join(group, name);
    const emitted = join(staging, packageDir, "src");
    if (!existsSync(emitted)) continue;
    rmSync(join(packageDir, "dist"), { recursive: true, force: true });
    renameSync(emitted, join(packageDir, "dist"));
    const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
    for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
      if (typeof target !== "object" || !target["dmarc-ledger-dist"])
        unbuildable.push(`${manifest.name} ${subpath}`);
    }
  }
}
rmSync(staging, { recursive: true, force: true });

if (unbuildable.length > 0) {
  console.error(
    `These exports have no "dmarc-ledger-dist" condition, so the built processes cannot load them:\n  ${unbuildable.join("\n  ")}\n` +
      'Write them as {"types": "./src/X.ts", "dmarc-ledger-dist": "./dist/X.js", "default": "./src/X.ts"}.',
  );
  process.exit(1);
}

// The dashboard, unless told otherwise (the tests' global setup builds it beside this, apart).
if (!process.argv.includes("--no-web")) {
  try {
    buildWeb();
  } catch (error) {
    console.error(`error: ${error.message}`);
    process.exit(1);
  }
}

const undeclared = await bundleCli();
if (undeclared.length > 0) {
  console.error(
    `The CLI bundle imports these packages, which @dmarc-ledger/cli does not depend on, so they would not resolve from ${bundleDir}:\n  ${undeclared.join("\n  ")}\n` +
      "Add them to apps/cli/package.json's dependencies, with the same version range as the package that uses them.",
  );
  process.exit(1);
}
console.log(`built every package and app to its dist/, the dashboard, and the CLI bundle to ${bundleDir}/`);
