import { readdir, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { fileInput, type IngestedItem, ingest } from "@dmarc-ledger/ingestion";
import type { Command } from "commander";
import { CliError, type CliIO } from "../io.js";
import { withRuntime } from "../with-runtime.js";

/** Files named on the command line, and every file below a named directory. */
async function expandPaths(paths: string[]): Promise<string[]> {
  const files: string[] = [];
  for (const path of paths) {
    const info = await stat(path).catch(() => null);
    if (!info) throw new CliError(`No such file or directory: ${path}`);
    if (info.isDirectory()) {
      const entries = await readdir(path, { withFileTypes: true });
      files.push(...(await expandPaths(entries.map((entry) => join(path, entry.name)).sort())));
    } else {
      files.push(path);
    }
  }
  return files;
}

function describe(file: string, item: IngestedItem): string {
  switch (item.kind) {
    case "aggregate":
      return `${file}: aggregate report for ${item.domain}, ${item.rows} rows, ${item.messages} messages (${item.status})`;
    case "failure":
      return `${file}: failure report for ${item.domain} (${item.status})`;
    case "rejected":
      return `${file}: rejected (${item.code}): ${item.reason}; ${item.status === "kept" ? "kept" : "already kept"} as rejected-input-${item.sha256.slice(0, 12)}…`;
  }
}

export function registerImportCommand(program: Command, io: CliIO, env: NodeJS.ProcessEnv): void {
  program
    .command("import")
    .description("import report files: XML, gzip, zip, .eml mail (aggregate and failure reports)")
    .argument("<paths...>", "files or directories")
    .action(async (paths: string[]) => {
      const files = await expandPaths(paths);
      const counts = { stored: 0, duplicate: 0, rejected: 0 };
      await withRuntime(env, async (runtime) => {
        for (const file of files) {
          const outcome = await ingest(runtime.store, fileInput(file), {
            source: `import:${basename(file)}`,
            metadata: { causedBy: "process:cli" },
          });
          for (const item of outcome.items) {
            const line = describe(file, item);
            if (item.kind === "rejected") {
              counts.rejected++;
              io.err(line);
            } else {
              counts[item.status === "duplicate" ? "duplicate" : "stored"]++;
              io.out(line);
            }
          }
        }
      });
      io.out(
        `${counts.stored} reports stored, ${counts.duplicate} duplicates, ${counts.rejected} inputs rejected (kept with the reason).`,
      );
    });
}
