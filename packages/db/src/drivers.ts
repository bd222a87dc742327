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
 * buffer cache (shared_buffers), smaller than PostgreSQL's 128 MB default. PostgreSQL sets the
 * whole cache up at its start, so it is resident from then on and costs about 6 ms of CPU per MB
 * (0.7 s at 128 MB, measured with --cpu-prof) before the first query:
 * - a long-lived process (the service, import) gets 32 MB: the service's first start idled at
 *   379 MB resident with 128 MB, 334 MB with 64 MB, 274 MB with 32 MB (docs/operations.md,
 *   "Memory and start-up time"). A page not in the cache is read from the data directory's
 *   files, which the operating system's page cache holds; at the sizes embedded mode is for,
 *   that costs a copy, not a disk read;
 * - a short-lived process (one command) gets 16 MB: it reads a few rows.
 * It changes only how many pages stay in PGlite's memory, not what is written or when: the data
 * directory, the WAL and durability are the same.
 */
export async function pgliteOptions(
  pglite: typeof PGlite,
  options: { shortLived?: boolean },
): Promise<PGliteOptions> {
  const pgliteWasmModule = await compiledPGliteWasm();
  const sharedBuffers = options.shortLived ? shortLivedBufferCache : serviceBufferCache;
  return {
    pgliteWasmModule,
    startParams: [...pglite.defaultStartParams, "-c", `shared_buffers=${sharedBuffers}`],
  };
}

export const serviceBufferCache = "32MB";
export const shortLivedBufferCache = "16MB";
