import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { corpusDir } from "../../../../test/support/corpus.js";

/** The DMARC corpus (test/fixtures/corpus/dmarc/). */
export const corpus = `${corpusDir}dmarc/`;

/** Every file below `dir`, in name order. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? filesUnder(path) : [path];
    });
}
