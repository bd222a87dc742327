// `pnpm install`'s postinstall: makes the fresh PGlite database that every new embedded data
// directory starts as a copy of (packages/db/src/pglite-initdb.ts), in the user's cache, so that
// the first `pnpm start` copies it (a fraction of a second) instead of running PGlite's initdb
// (seconds). Best effort: it never fails the install. Without it (`--ignore-scripts`, no tsx in
// a production install, a read-only cache) the first start runs initdb and leaves the template.
try {
  // Under `pnpm install` the temporary directory tsx caches in resolved to the working directory.
  process.env.TSX_DISABLE_CACHE = "1";
  const { register } = await import("tsx/esm/api");
  register();
  const { makePgliteTemplate } = await import("../packages/db/src/pglite-initdb.ts");
  const started = performance.now();
  const template = await makePgliteTemplate();
  const ms = Math.round(performance.now() - started);
  if (template) console.log(`PGlite template for new data directories: ${template} (${ms} ms)`);
} catch (error) {
  console.log(`No PGlite template made (the first start will run initdb): ${error?.message ?? error}`);
}
