/**
 * `pnpm bench`: runs every benchmark entry point (packages/<name>/bench/main.ts, apps/<name>/bench/main.ts
 * and test/bench/*.bench.ts), each in its own process so that peak RSS figures are its own.
 * Each entry point prints its figures and ratios against a baseline it measures in the same run;
 * the figures of each that succeeds replace its block in docs/benchmarks.md.
 * `pnpm bench NAME` runs only the entries whose path contains NAME.
 */
import { fileURLToPath } from "node:url";
import { runBenches } from "./runner.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const failed = await runBenches({ root, filter: process.argv[2] });
process.exit(failed.length ? 1 : 0);
