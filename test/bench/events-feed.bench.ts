/**
 * Issue #44: reading a large store's events feed from the beginning, in events per second, over
 * HTTP (GET /api/events, pages of 1,000) and over NATS JetStream (the publisher's rate into the
 * stream, and an ordered consumer's read of it), against reading the events table directly
 * (the store's readAll, pages of 1,000) in the same run, on PostgreSQL. Also the projection that
 * indexes the feed. `BENCH_EVENTS` sets the store's size (the issue's figure, 10,000,000, by
 * default); `BENCH_NATS_URL` the server (nats://127.0.0.1:4222).
 *
 * The store: one tenant, its events small domain events (DomainGroupSet over 1,000 domains,
 * inserted by SQL in the order the append path would give them), so that the figures are the
 * feed's machinery, not report parsing.
 */
import { randomBytes } from "node:crypto";
import { apiConfigFrom, apiSettings, bindPort, startApiApp } from "@dmarc-ledger/api";
import { parseSettings } from "@dmarc-ledger/config";
import { createTestDatabase } from "@dmarc-ledger/db/testing";
import { eventFeedProjection } from "@dmarc-ledger/event-feed";
import { startNatsPublisher } from "@dmarc-ledger/event-feed/nats";
import { catchUp } from "@dmarc-ledger/projection-engine";
import { openRuntime } from "@dmarc-ledger/runtime";
import { createTenant, tenancyProjections } from "@dmarc-ledger/tenancy";
import { DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { sql } from "kysely";
import { pino } from "pino";

const total = Number(process.env.BENCH_EVENTS ?? 10_000_000);
const natsUrl = process.env.BENCH_NATS_URL ?? "nats://127.0.0.1:4222";
const log = (line: string) => console.log(line);
const progress = (line: string) => process.stderr.write(`  … ${line}\n`);
const rate = (count: number, ms: number) => Math.round(count / (ms / 1000));

const database = await createTestDatabase("dl_bench_feed");
const env = { DATABASE_URL: database.url, MASTER_KEY: randomBytes(32).toString("base64") };
const runtime = await openRuntime(env);
const tag = randomBytes(4).toString("hex");
const stream = `DL_BENCH_FEED_${tag}`;
const prefix = `dl-bench-${tag}`;
try {
  const meta = { causedBy: "process:bench" };
  const { tenantId, apiKey } = await createTenant(runtime.store, { name: "bench", region: "global" }, meta);
  await catchUp({ store: runtime.store, db: runtime.db, projections: tenancyProjections });

  progress(`inserting ${total.toLocaleString("en")} events`);
  const chunk = 200_000;
  let inserted = 0;
  const insertStarted = performance.now();
  while (inserted < total) {
    const count = Math.min(chunk, total - inserted);
    await sql`
      insert into events (stream, revision, type, data, metadata, id)
      select 'domain-d' || (i % 1000) || '.bench.example', i / 1000, 'DomainGroupSet',
        json_build_object('domain', 'd' || (i % 1000) || '.bench.example', 'tenantId', ${tenantId}::text,
          'group', 'group ' || (i % 10))::text,
        json_build_object('schemaVersion', 1, 'causedBy', 'process:bench',
          'occurredAt', '2026-12-06T00:00:00.000Z')::text,
        gen_random_uuid()
      from generate_series(${inserted}::bigint, ${inserted + count - 1}::bigint) as i`.execute(runtime.db);
    inserted += count;
    progress(`${inserted.toLocaleString("en")} inserted`);
  }
  const insertMs = performance.now() - insertStarted;
  const all = total + 2; // TenantCreated and ApiKeyIssued

  const indexStarted = performance.now();
  await catchUp({ store: runtime.store, db: runtime.db, projections: [eventFeedProjection] });
  const indexMs = performance.now() - indexStarted;

  // Baseline: the events table read directly, in the store's order.
  const directStarted = performance.now();
  let direct = 0;
  for (let after: bigint | "start" = "start"; ; ) {
    const page = await runtime.store.readAll(after, 1000);
    if (page.length === 0) break;
    direct += page.length;
    after = page.at(-1)!.position;
  }
  const directMs = performance.now() - directStarted;

  // Over HTTP: the API app alone, on the same database.
  const server = await bindPort(0);
  const settings = parseSettings(apiSettings, {
    RATE_LIMIT_PER_SECOND: "1000000",
    RATE_LIMIT_BURST: "1000000",
  });
  const config = apiConfigFrom(settings, server.port);
  startApiApp({
    server,
    db: runtime.db,
    store: runtime.store,
    projections: [eventFeedProjection],
    config,
    logger: pino({ level: "silent" }),
    checkDomainStatus: null as never,
  });
  const httpStarted = performance.now();
  let overHttp = 0;
  for (let after = ""; ; ) {
    const response = await fetch(`${config.publicBaseUrl}events?limit=1000${after && `&after=${after}`}`, {
      headers: { Authorization: `Bearer ${apiKey}` },
    });
    const page = (await response.json()) as { events: unknown[]; next: string };
    if (page.events.length === 0) break;
    overHttp += page.events.length;
    after = page.next;
  }
  const httpMs = performance.now() - httpStarted;
  await server.close();

  // Over NATS: the publisher's rate into a stream of its own, then an ordered consumer's read.
  const publishStarted = performance.now();
  let published = 0;
  const publisher = startNatsPublisher({
    db: runtime.db as never,
    store: runtime.store,
    settings: { url: natsUrl, stream, subjectPrefix: prefix },
    source: config.publicBaseUrl,
    pageSize: 1000,
    onPublished: (events) => {
      published += events.length;
    },
    onError: (error) => progress(`publisher: ${String(error)}`),
  });
  while (published < all) await new Promise((resolve) => setTimeout(resolve, 100));
  const publishMs = performance.now() - publishStarted;
  await publisher.stop();

  const nc = await connect({ servers: natsUrl });
  const consumer = await jetstream(nc).consumers.get(stream, {
    filter_subjects: `${prefix}.${tenantId}.>`,
    deliver_policy: DeliverPolicy.All,
  });
  const consumeStarted = performance.now();
  let consumed = 0;
  const messages = await consumer.consume({ max_messages: 10_000 });
  for await (const message of messages) {
    JSON.parse(message.string());
    if (++consumed >= all) break;
  }
  const consumeMs = performance.now() - consumeStarted;
  await (await jetstreamManager(nc)).streams.delete(stream);
  await nc.close();

  log(
    `events feed, ${all.toLocaleString("en")} events of one tenant on PostgreSQL (insert by SQL: ${rate(total, insertMs).toLocaleString("en")}/s)`,
  );
  log(
    `  index (projection event_feed):   ${rate(all, indexMs).toLocaleString("en")} events/s (${(indexMs / 1000).toFixed(1)} s)`,
  );
  log(
    `  events table, readAll by 1,000:  ${rate(direct, directMs).toLocaleString("en")} events/s (${(directMs / 1000).toFixed(1)} s) baseline`,
  );
  log(
    `  GET /api/events by 1,000:        ${rate(overHttp, httpMs).toLocaleString("en")} events/s (${(httpMs / 1000).toFixed(1)} s) ×${(directMs / httpMs).toFixed(2)} of the baseline`,
  );
  log(
    `  NATS: publisher into the stream: ${rate(published, publishMs).toLocaleString("en")} events/s (${(publishMs / 1000).toFixed(1)} s) ×${(directMs / publishMs).toFixed(2)}`,
  );
  log(
    `  NATS: ordered consumer's read:   ${rate(consumed, consumeMs).toLocaleString("en")} events/s (${(consumeMs / 1000).toFixed(1)} s) ×${(directMs / consumeMs).toFixed(2)}`,
  );
  if (direct !== all || overHttp !== all || consumed !== all) {
    throw new Error(`counts differ: table ${direct}, HTTP ${overHttp}, NATS ${consumed}, expected ${all}`);
  }
} finally {
  await runtime.close();
  await database.drop();
}
