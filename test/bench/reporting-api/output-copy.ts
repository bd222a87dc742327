import { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type pg from "pg";
import { from as copyFrom, to as copyTo } from "pg-copy-streams";

/**
 * A second yardstick for projection throughput: the time to COPY the projections' own final rows
 * into empty tables with the same indexes and constraints. No projection that writes these read
 * models can be faster than that, so the projection's time against it is its own overhead
 * (reading and decoding events, summing, upserting batch by batch).
 */
export async function copyProjectionOutput(
  client: pg.ClientBase,
  tables: readonly string[],
): Promise<{ rows: number; bytes: number; ms: number }> {
  const outputs: { table: string; chunks: Buffer[] }[] = [];
  let rows = 0;
  let bytes = 0;
  for (const table of tables) {
    const chunks: Buffer[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk);
        bytes += chunk.length;
        done();
      },
    });
    const out = client.query(copyTo(`copy ${table} to stdout`));
    await pipeline(out, sink);
    rows += Number(out.rowCount ?? 0);
    outputs.push({ table, chunks });
    await client.query(`create table bench_out_${table} (like ${table} including all)`);
  }
  // Written out before the clock starts: the copy measures writing, as the raw COPY does.
  await client.query("checkpoint");
  const started = performance.now();
  for (const { table, chunks } of outputs) {
    await pipeline(Readable.from(chunks), client.query(copyFrom(`copy bench_out_${table} from stdin`)));
  }
  const ms = performance.now() - started;
  for (const { table } of outputs) await client.query(`drop table bench_out_${table}`);
  return { rows, bytes, ms };
}
