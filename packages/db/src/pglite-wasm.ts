import { readFile } from "node:fs/promises";
import type { PGliteOptions } from "@electric-sql/pglite";

type WasmModule = NonNullable<PGliteOptions["pgliteWasmModule"]>;
// Neither lib ES2023 nor @types/node declares the WebAssembly global; this is the part used here.
declare const WebAssembly: { compile(bytes: Uint8Array): Promise<WasmModule> };

let compiled: Promise<WasmModule> | undefined;

/**
 * PGlite's WebAssembly (10 MB), compiled once per process. V8 compiles it on its worker
 * threads, so a process that will open PGlite starts this first and loads its other modules on
 * the main thread meanwhile; left to PGlite, the compilation would start only at the open, with
 * the main thread waiting for it.
 */
export function compiledPGliteWasm(): Promise<WasmModule> {
  // Beside PGlite's entry point, where PGlite itself reads it.
  compiled ??= readFile(new URL("./pglite.wasm", import.meta.resolve("@electric-sql/pglite"))).then((bytes) =>
    WebAssembly.compile(bytes),
  );
  return compiled;
}
