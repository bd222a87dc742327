import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

/**
 * Every benchmark entry point, as paths inside the repository: packages/<name>/bench/main.ts,
 * apps/<name>/bench/main.ts and test/bench/*.bench.ts, in that order.
 */
export function benchEntryPoints(root: string): string[] {
  const found: string[] = [];
  for (const group of ["packages", "apps"]) {
    for (const name of readdirSync(join(root, group)).sort()) {
      const main = join(group, name, "bench", "main.ts");
      if (existsSync(join(root, main))) found.push(main);
    }
  }
  for (const file of readdirSync(join(root, "test", "bench")).sort()) {
    if (file.endsWith(".bench.ts")) found.push(`test/bench/${file}`);
  }
  return found;
}
