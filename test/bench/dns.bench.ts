/**
 * Issue #12, "Serving the records": queries per second answered over UDP by apps/dns for a zone of
 * BENCH_DNS_DOMAINS domains (default 100,000; each with a root and two chained Safe SPF records and
 * a report authorisation record, all stored as events in PostgreSQL and loaded by following the
 * store), as a ratio to a bare dns2 server answering every question with one constant record,
 * measured in the same run with the same client. Target: at least 70%.
 * Each server runs in a process of its own; the client keeps a window of queries in flight.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createSocket } from "node:dgram";
import { fileURLToPath } from "node:url";
import { migrateToLatest, openDatabase } from "@dmarc-ledger/db";
import { createTestDatabase } from "@dmarc-ledger/db/testing";
import { eventStoreMigrations } from "@dmarc-ledger/event-store";
import { newEvent, streams } from "@dmarc-ledger/events";
import { openRuntime } from "@dmarc-ledger/runtime";
import { Packet } from "dns2";
import { sql } from "kysely";

const domains = Number(process.env.BENCH_DNS_DOMAINS ?? 100_000);
const roundSeconds = Number(process.env.BENCH_DNS_SECONDS ?? 5);
const rounds = 3;
const window = 64;
const target = 0.7;
const zone = "spf.bench.test";
const reports = "reports.bench.test";
const log = (line: string) => console.log(line);
const progress = (line: string) => process.stderr.write(`  … ${line}\n`);

const domainName = (index: number) => `customer-${index}.example${index % 7 === 0 ? ".co.uk" : ".com"}`;
const version = (index: number) => (index * 2654435761).toString(16).padStart(8, "0").slice(-8);

function recordsOf(index: number): { name: string; value: string }[] {
  const root = `${domainName(index)}.${zone}`;
  const chained = (n: number) => `_spf${n}-${version(index)}.${root}`;
  const terms = (n: number) =>
    Array.from(
      { length: 14 },
      (_, term) => `ip4:${10 + n}.${index % 250}.${Math.floor(index / 250) % 250}.${term * 8}/29`,
    );
  return [
    { name: root, value: `v=spf1 ${terms(0).join(" ")} redirect=${chained(1)}` },
    { name: chained(1), value: `v=spf1 ${terms(1).join(" ")} redirect=${chained(2)}` },
    { name: chained(2), value: `v=spf1 ${terms(2).join(" ")} ~all` },
  ];
}

/**
 * Stores each domain's events in its own stream, as the PostgreSQL adapter's append writes them
 * (same tables, columns and defaults, under its append lock) but 5,000 streams per statement: on a
 * shared machine one commit per append would take the bench's whole budget. The server reads them
 * back through the store's own subscription, as in production.
 */
async function loadZone(databaseUrl: string): Promise<void> {
  const database = await openDatabase({ kind: "postgres", url: databaseUrl });
  await migrateToLatest(database.db, eventStoreMigrations);
  const started = Date.now();
  const meta = { causedBy: "bench" };
  for (let first = 0; first < domains; first += 5000) {
    const rows: { stream: string; revision: number; type: string; data: string; metadata: string }[] = [];
    for (let index = first; index < Math.min(domains, first + 5000); index++) {
      const domain = domainName(index);
      const tenantId = `t${index % 100}`;
      const events = [
        newEvent("DomainAdded", { domain, tenantId }, meta),
        newEvent(
          "SafeSpfRecordComputed",
          {
            domain,
            tenantId,
            original: "v=spf1 include:_spf.example.net ~all",
            records: recordsOf(index),
            lookupsBefore: 12,
            lookupsAfter: 2,
            networks: [],
            added: [],
            removed: [],
            warnings: [],
            minTtl: 300,
          },
          meta,
        ),
      ];
      events.forEach((event, revision) => {
        rows.push({
          stream: streams.domain(domain),
          revision,
          type: event.type,
          data: JSON.stringify(event.data),
          metadata: JSON.stringify(event.metadata),
        });
      });
    }
    await database.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(${0x45565453}::int4, 0)`.execute(trx);
      const json = JSON.stringify(rows);
      await sql`insert into streams (stream, revision)
        select stream, max(revision) from json_to_recordset(${json}::json) as r(stream text, revision bigint)
        group by stream`.execute(trx);
      await sql`insert into events (stream, revision, type, data, metadata, id)
        select stream, revision, type, data::json, metadata::json, gen_random_uuid()
        from json_to_recordset(${json}::json) as r(stream text, revision bigint, type text, data text, metadata text)
        order by stream, revision`.execute(trx);
    });
    if (first % 20_000 === 0) progress(`stored ${first} domains`);
  }
  log(
    `stored ${domains} domains as ${domains * 2} events in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  await database.close();
}

interface Question {
  bytes: Buffer;
  /** The TXT value the answer must carry; null for a name that does not exist. */
  expected: string | null;
}

/** Queries as resolvers send them (EDNS(0), 1232 bytes): roots, chained records, authorisations, misses. */
function questions(count: number): Question[] {
  return Array.from({ length: count }, (_, n) => {
    const index = Math.floor(Math.random() * domains);
    const kind = n % 10;
    const records = recordsOf(index);
    const [name, expected] =
      kind < 5
        ? [records[0]!.name, records[0]!.value]
        : kind < 7
          ? [records[1 + (n % 2)]!.name, records[1 + (n % 2)]!.value]
          : kind < 9
            ? [`${domainName(index)}._report._dmarc.${reports}`, "v=DMARC1"]
            : [`missing-${index}.${zone}`, null];
    const query = new Packet();
    query.header.id = n & 0xffff;
    query.questions.push({ name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN } as never);
    query.additionals.push(Packet.Resource.EDNS([]) as never);
    return { bytes: query.toBuffer(), expected };
  });
}

function startServer(args: string[]): Promise<{ child: ChildProcess; port: number; lines: string[] }> {
  const script = fileURLToPath(new URL("./dns/serve.ts", import.meta.url));
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines: string[] = [];
  return new Promise((resolve, reject) => {
    let buffered = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      buffered += chunk.toString();
      for (let newline = buffered.indexOf("\n"); newline >= 0; newline = buffered.indexOf("\n")) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        lines.push(line);
        const port = /^port (\d+)$/.exec(line);
        if (port) resolve({ child, port: Number(port[1]), lines });
      }
    });
    child.once("exit", (code) => reject(new Error(`server exited with ${code}`)));
  });
}

/** Checks answers to a sample: the expected record, or NXDOMAIN. Returns how many were wrong. */
async function verify(port: number, sample: Question[]): Promise<number> {
  const socket = createSocket("udp4");
  let wrong = 0;
  for (const question of sample) {
    const reply = await new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no answer")), 2000);
      socket.once("message", (message) => {
        clearTimeout(timer);
        resolve(message);
      });
      socket.send(question.bytes, port, "127.0.0.1");
    });
    const packet = Packet.parse(reply);
    const answer = packet.answers[0] as unknown as { data?: string[] } | undefined;
    const ok =
      question.expected === null
        ? packet.header.rcode === 3
        : packet.header.aa === 1 && answer?.data?.join("") === question.expected;
    if (!ok) wrong++;
  }
  socket.close();
  return wrong;
}

/** Answers per second with `window` queries in flight for `seconds`; a query lost for 1 s is resent. */
async function measure(port: number, load: Question[], seconds: number): Promise<number> {
  const socket = createSocket("udp4");
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
  let answered = 0;
  let next = 0;
  let lastAnswer = Date.now();
  const send = () => {
    socket.send(load[next++ % load.length]!.bytes, port, "127.0.0.1");
  };
  socket.on("message", () => {
    answered++;
    lastAnswer = Date.now();
    send();
  });
  for (let i = 0; i < window; i++) send();
  const refill = setInterval(() => {
    if (Date.now() - lastAnswer < 1000) return;
    for (let i = 0; i < window; i++) send();
  }, 250);
  // Warm up, then count.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const from = answered;
  const started = process.hrtime.bigint();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  const count = answered - from;
  clearInterval(refill);
  socket.close();
  return count / elapsed;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const database = await createTestDatabase("dl_bench_dns");
const servers: ChildProcess[] = [];
try {
  // Create the schema first, so that the server's start below only reads.
  await (await openRuntime({ DATABASE_URL: database.url })).close();
  await loadZone(database.url);
  progress("starting the servers");
  const ledger = await startServer(["ledger", database.url]);
  servers.push(ledger.child);
  for (const line of ledger.lines.filter((line) => !line.startsWith("port"))) log(`apps/dns: ${line}`);
  const constant = await startServer(["constant"]);
  servers.push(constant.child);

  progress("encoding queries");
  const load = questions(20_000);
  const wrong = await verify(ledger.port, load.slice(0, 500));
  log(`answers checked: 500, wrong: ${wrong}`);

  // Both servers' code warmed up (JIT) before anything counts.
  await measure(constant.port, load, 1);
  await measure(ledger.port, load, 1);
  const ledgerRates: number[] = [];
  const constantRates: number[] = [];
  for (let round = 0; round < rounds; round++) {
    constantRates.push(await measure(constant.port, load, roundSeconds));
    ledgerRates.push(await measure(ledger.port, load, roundSeconds));
    progress(
      `round ${round + 1}: dns2 constant ${Math.round(constantRates.at(-1)!)}/s, apps/dns ${Math.round(ledgerRates.at(-1)!)}/s`,
    );
  }
  const ratio = median(ledgerRates) / median(constantRates);
  log(`UDP, ${window} queries in flight, ${rounds} rounds of ${roundSeconds} s, medians:`);
  log(`  bare dns2 answering a constant: ${Math.round(median(constantRates))} queries/s`);
  log(`  apps/dns, ${domains} domains:        ${Math.round(median(ledgerRates))} queries/s`);
  log(
    `  ratio ${(ratio * 100).toFixed(0)}% (target >= ${target * 100}%): ${ratio >= target ? "met" : "NOT met"}`,
  );
  if (wrong > 0) process.exitCode = 1;
} finally {
  for (const child of servers) child.kill("SIGTERM");
  await new Promise((resolve) => setTimeout(resolve, 500));
  await database.drop();
}
