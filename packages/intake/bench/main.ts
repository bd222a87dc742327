/**
 * `pnpm bench packages/intake`: what the raw archive costs. The same distinct reports (the corpus's
 * 909 KB, 2,286-record report under new report ids) go through `ingest` alone (the baseline, no
 * archive) and through `receiveInput` (hash, gzip, archive row and receipt, then ingest, then
 * the outcome), on PGlite in memory and on PostgreSQL when it is reachable. Prints each rate and
 * the ratio; also the spool's own throughput (hash and gzip in memory) and compression ratio.
 */
import { readFileSync } from "node:fs";
import { type Database, migrateToLatest, openDatabase } from "@dmarc-ledger/db";
import { createTestDatabase } from "@dmarc-ledger/db/testing";
import { openPostgresEventStore } from "@dmarc-ledger/event-store";
import { aggregateCorpus } from "../../../test/support/corpus.js";
import { bytesInput, ingest, intakeMigrations, receiveInput, spool } from "../src/index.js";

const corpus = aggregateCorpus;
const large = readFileSync(`${corpus}!large-example.com!1711897200!1711983600.xml`, "utf8");
const rounds = 12;
const metadata = { causedBy: "process:bench" };
let serial = 0;
const distinctReport = () =>
  Buffer.from(
    large.replace(
      "<report_id>example.com:1711897200</report_id>",
      `<report_id>bench-${serial++}</report_id>`,
    ),
  );

async function timed(work: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

async function measure(label: string, database: Database): Promise<void> {
  await migrateToLatest(database.db, intakeMigrations);
  const store = await openPostgresEventStore(database);
  const deps = { store, db: database.db };
  // Warm-up: one of each.
  await ingest(store, bytesInput(distinctReport()), { source: "bench", metadata });
  await receiveInput(deps, bytesInput(distinctReport()), { channel: "bench", source: "bench", metadata });
  let baseline = 0;
  let archived = 0;
  // Interleaved, so that load on the machine falls on both alike.
  for (let round = 0; round < rounds; round++) {
    const a = distinctReport();
    const b = distinctReport();
    baseline += await timed(async () => {
      await ingest(store, bytesInput(a), { source: "bench", metadata });
    });
    archived += await timed(async () => {
      await receiveInput(deps, bytesInput(b), { channel: "bench", source: "bench", metadata });
    });
  }
  const mb = (large.length * rounds) / 1024 / 1024;
  console.log(
    `${label}: ingest alone ${(mb / (baseline / 1000)).toFixed(1)} MB/s (${(baseline / rounds).toFixed(0)} ms a report), ` +
      `receiveInput ${(mb / (archived / 1000)).toFixed(1)} MB/s (${(archived / rounds).toFixed(0)} ms); ` +
      `receiveInput takes ${(archived / baseline).toFixed(2)}x the time of ingest alone`,
  );
  await store.close();
}

const sample = distinctReport();
let spooledBytes = 0;
const spoolMs = await timed(async () => {
  for (let round = 0; round < rounds; round++)
    spooledBytes = (await spool(bytesInput(sample).open(), 1 << 30)).compressed.byteLength;
});
console.log(
  `spool (SHA-256 + gzip in memory): ${((sample.byteLength * rounds) / 1024 / 1024 / (spoolMs / 1000)).toFixed(1)} MB/s, ` +
    `${sample.byteLength} bytes -> ${spooledBytes} (${(sample.byteLength / spooledBytes).toFixed(1)}x smaller)`,
);

const pglite = await openDatabase({ kind: "pglite-memory" });
await measure("PGlite (memory)", pglite);
await pglite.close();

const test = await createTestDatabase("dl_bench_intake").catch(() => null);
if (test) {
  const postgres = await openDatabase({ kind: "postgres", url: test.url });
  await measure("PostgreSQL", postgres);
  await postgres.close();
  await test.drop();
} else {
  console.log("PostgreSQL: not reachable, skipped");
}
