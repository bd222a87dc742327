/**
 * Preloaded (`--import`) into a measured child process: on exit, writes the process's peak RSS in
 * bytes to the file PEAK_RSS_FILE names. The kernel's figure (getrusage), not a sample.
 */
import { writeFileSync } from "node:fs";

const file = process.env.PEAK_RSS_FILE;
if (file) {
  process.on("exit", () => {
    writeFileSync(file, String(process.resourceUsage().maxRSS * 1024));
  });
}
