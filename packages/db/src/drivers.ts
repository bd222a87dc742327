import type { PGlite, PGliteOptions } from "@electric-sql/pglite";
import { compiledPGliteWasm } from "./pglite-wasm.js";

// Each driver loads only in a process that uses it: pg costs an embedded command ~0.1 s of
// start-up, PGlite's module the same to a process on PostgreSQL.

export async function loadPostgres() {
  const { default: pg } = await import("pg");
  return pg;
}

export async function loadPGlite() {
  const [{ PGlite }, { PGliteDialect }] = await Promise.all([
    import("@electric-sql/pglite"),
    import("kysely-pglite-dialect"),
  ]);
  return { PGlite, PGliteDialect };
}

/**
 * PGlite's options: its WebAssembly as compiled for this process (see pglite-wasm.ts), and its
 * start-up parameters. A short-lived process (one command) gets a 16 MB buffer cache
 * instead of PostgreSQL's 128 MB: setting up the cache costs about 6 ms of CPU per MB (0.7 s at
 * 128 MB, measured with --cpu-prof) before the first query, which a command reading a few
 * rows never gets back. It changes only how many pages stay in memory, not what is written or
 * when: the data directory, the WAL and durability are the same. A long-lived process (the
 * service) keeps the default.
 */
export async function pgliteOptions(
  pglite: typeof PGlite,
  options: { shortLived?: boolean },
): Promise<PGliteOptions> {
  const pgliteWasmModule = await compiledPGliteWasm();
  if (!options.shortLived) return { pgliteWasmModule };
  return { pgliteWasmModule, startParams: [...pglite.defaultStartParams, "-c", "shared_buffers=16MB"] };
}
