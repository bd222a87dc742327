import { readFileSync } from "node:fs";
import { setFlagsFromString } from "node:v8";
import type { PGliteOptions } from "@electric-sql/pglite";

type WasmModule = NonNullable<PGliteOptions["pgliteWasmModule"]>;
// Neither lib ES2023 nor @types/node declares the WebAssembly global; this is the part used here.
declare const WebAssembly: { compile(bytes: Uint8Array): Promise<WasmModule> };

let compiled: Promise<WasmModule> | undefined;
/** Set by compileWasmForOneCommand. */
let baselineOnly = false;

/**
 * PGlite's WebAssembly (10 MB), compiled once per process. V8 compiles it on its worker
 * threads, so a process that will open PGlite starts this first and loads its other modules on
 * the main thread meanwhile; left to PGlite, the compilation would start only at the open, with
 * the main thread waiting for it.
 */
export function compiledPGliteWasm(): Promise<WasmModule> {
  if (compiled) return compiled;
  // Read at once, in one call (a few milliseconds): read piece by piece in the background, the
  // file would be in only once the main thread is done loading modules, as each piece waits for
  // it, and the compilation would start that late.
  try {
    // Beside PGlite's entry point, where PGlite itself reads it.
    const bytes = readFileSync(new URL("./pglite.wasm", import.meta.resolve("@electric-sql/pglite")));
    compiled = WebAssembly.compile(bytes).catch((error: unknown) => {
      if (!baselineOnly) throw error;
      // The baseline compiler cannot compile everything on every CPU (V8 then falls back to the
      // optimising one, which the flag forbids): compile as usual after all.
      setFlagsFromString("--no-liftoff-only");
      baselineOnly = false;
      return WebAssembly.compile(bytes);
    });
  } catch (error) {
    compiled = Promise.reject(error);
  }
  return compiled;
}

/**
 * V8 compiles WebAssembly twice: at once with its baseline compiler (Liftoff), then again, on its
 * worker threads, every function that runs often with its optimising compiler (TurboFan). For
 * one command the second compilation is pure cost: PGlite's start-up and a few queries never
 * get back what optimising 10 MB of PostgreSQL takes, and the process waits at exit for the
 * compilations still running. Measured on `tenant list` (embedded, CPU of the whole process):
 * about 1.6 s with both compilers, 0.9 s with the baseline one only.
 *
 * The flag is V8's, for the whole process and every module compiled after it: a process that
 * runs one short command calls this before PGlite compiles; the service never does.
 */
export function compileWasmForOneCommand(): void {
  setFlagsFromString("--liftoff-only");
  baselineOnly = true;
}
