import { createReadStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";

/** An input we can read more than once: once to parse, and again to keep it if it is refused. */
export interface InputBytes {
  open(): AsyncIterable<Uint8Array>;
  size(): Promise<number>;
  readAll(): Promise<Uint8Array>;
}

export function fileInput(path: string): InputBytes {
  return {
    open: () => createReadStream(path),
    size: async () => (await stat(path)).size,
    readAll: async () => new Uint8Array(await readFile(path)),
  };
}

export function bytesInput(bytes: Uint8Array): InputBytes {
  return {
    open: async function* () {
      yield bytes;
    },
    size: async () => bytes.byteLength,
    readAll: async () => bytes,
  };
}
