import { execFile } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

/** Every regular file below `dir` (the control socket lies there too while the service runs). */
export function filesBelow(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    const stat = statSync(path);
    return stat.isDirectory() ? filesBelow(path) : stat.isFile() ? [path] : [];
  });
}

/** Where each marker is found in a PGlite data directory's files (heap, WAL, indexes), as bytes. */
export function markersInFiles(dataDir: string, markers: readonly string[]): string[] {
  const found: string[] = [];
  for (const file of filesBelow(dataDir)) {
    const bytes = readFileSync(file);
    for (const marker of markers) if (bytes.includes(marker)) found.push(`${file}: ${marker}`);
  }
  return found;
}

/**
 * Where each marker is found in the whole database: `pg_dump` of it under DATABASE_URL, else
 * every file of the PGlite data directory.
 */
export async function markersInDatabase(
  env: { DATABASE_URL?: string; DMARC_LEDGER_DATA_DIR?: string },
  markers: readonly string[],
): Promise<string[]> {
  if (!env.DATABASE_URL) return markersInFiles(env.DMARC_LEDGER_DATA_DIR!, markers);
  const { stdout } = await promisify(execFile)("pg_dump", ["--no-owner", env.DATABASE_URL], {
    maxBuffer: 512 * 1024 * 1024,
  });
  return markers.filter((marker) => stdout.includes(marker)).map((marker) => `pg_dump: ${marker}`);
}
