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

/**
 * Where each marker is found in a PostgreSQL database's own files and the cluster's WAL, read by
 * the server after a CHECKPOINT (so that every change so far is in the table files): what a copy
 * of the data directory would hold, beyond what pg_dump shows (dead rows, dropped columns, WAL).
 * Needs a superuser (pg_read_binary_file); the test cluster's postgres is one.
 */
export async function markersInPostgresFiles(url: string, markers: readonly string[]): Promise<string[]> {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("checkpoint");
    const { rows: files } = await client.query<{ path: string }>(
      `select 'base/' || d.oid || '/' || f as path
         from pg_database d, pg_ls_dir('base/' || d.oid) f
        where d.datname = current_database()
       union all
       select 'pg_wal/' || name from pg_ls_waldir() where name ~ '^[0-9A-F]{24}$'`,
    );
    const found: string[] = [];
    for (const { path } of files) {
      // A WAL segment recycled, or a table's file unlinked, since the listing: nothing to read.
      const { rows: present } = await client.query(
        "select 1 from pg_stat_file($1, true) where size is not null",
        [path],
      );
      if (present.length === 0) continue;
      const { rows } = await client.query<{ marker: string }>(
        `with file as (select pg_read_binary_file($1::text) as bytes)
         select m as marker from file, unnest($2::text[]) m
          where position(convert_to(m, 'UTF8') in file.bytes) > 0`,
        [path, markers],
      );
      for (const row of rows) found.push(`${path}: ${row.marker}`);
    }
    return found;
  } finally {
    await client.end();
  }
}
