import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The shared DMARC corpus, read in place beside the project root (never copied into it). */
export const corpus = fileURLToPath(new URL("../../../../../shared/corpus/dmarc/", import.meta.url));

/** Every file below `dir`, in name order. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? filesUnder(path) : [path];
    });
}
