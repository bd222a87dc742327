/**
 * Issue #25, "Alerts that reach people": BENCH_ALERTS alerts (default 10,000) delivered by signed
 * webhooks to a receiver on loopback, through the whole path: report events stored, the
 * evaluator, the outbox, AlertRaised, the delivery worker. Figures:
 * Alerts are findings (one per rule, domain and report day, docs/alerts.md): every report here
 * brings one new sender on a report day and domain of its own, so each makes one alert.
 * - throughput: deliveries per second, from the first report stored to the last alert received,
 *   against a baseline measured in the same run: the same number of signed POSTs sent straight to
 *   the same receiver with the same concurrency (sendWebhook, no outbox, no database);
 * - latency: the time from a report's events being stored to its alert's arrival at the receiver,
 *   p50 and p95, over BENCH_LATENCY_REPORTS reports (default 50) stored one at a time, 200 ms
 *   apart, each with one new sender, while nothing else is queued; then the same beside another
 *   tenant's endpoint that never answers with BENCH_DEAD_PENDING (5,000) deliveries due, and the
 *   ratio of the two p95s.
 * Needs the test PostgreSQL server. `BENCH_ALERTS=1000 pnpm bench alerts` is quick.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { addEndpoint, alertsSettings, sendWebhook, setAlertRule, startAlerts } from "@dmarc-ledger/alerts";
import { parseSettings } from "@dmarc-ledger/config";
import { createTestDatabase } from "@dmarc-ledger/db/testing";
import { type AggregateReportReceived, newEvent, streams } from "@dmarc-ledger/events";
import { startProjector } from "@dmarc-ledger/projection-engine";
import { openRuntime, runtimeDataKeys } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { addDomain, createTenant } from "@dmarc-ledger/tenancy";
import { testMasterKey } from "../support/master-key.js";

const ALERTS = Number(process.env.BENCH_ALERTS ?? 10_000);
const LATENCY_REPORTS = Number(process.env.BENCH_LATENCY_REPORTS ?? 50);
const DEAD_PENDING = Number(process.env.BENCH_DEAD_PENDING ?? 5000);
const CONCURRENCY = 16;
const day = 86_400;
const today = Math.floor(Date.now() / 1000 / day) * day;

const log = (line: string) => console.log(line);
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const ip = (i: number) => `198.18.${(i >> 8) & 255}.${i & 255}`;

/** Report days a domain gives alerts for here: the rule's window is set this wide. */
const DAYS_PER_DOMAIN = 3000;
const domainOf = (n: number) => `bench-${Math.floor(n / DAYS_PER_DOMAIN)}.com`;
/** The n-th alert's report day: today, then back one day at a time, on each domain in turn. */
const dayOf = (n: number) => today - (n % DAYS_PER_DOMAIN) * day;

function report(identity: string, ips: string[], domain: string, begin: number): AggregateReportReceived {
  return {
    identity,
    schema: "1.0",
    orgName: "bench.example",
    organization: "bench.example",
    email: "dmarc@bench.example",
    reportId: identity,
    begin,
    end: begin + day - 1,
    policy: {
      domain,
      adkim: null,
      aspf: null,
      p: "none",
      sp: null,
      np: null,
      pct: null,
      fo: null,
      testing: null,
      discoveryMethod: null,
    },
    rows: ips.map((sourceIp) => ({
      sourceIp,
      count: 1,
      disposition: "none",
      policyDkim: "pass",
      policySpf: "pass",
      reasons: [],
      arc: null,
      headerFrom: domain,
      envelopeFrom: null,
      envelopeTo: null,
      dkim: [],
      spf: [],
    })),
    chunk: { index: 0, last: true },
    source: "bench",
    warnings: [],
  };
}

async function main() {
  // The receiver: when each id first arrived, and the senders it listed.
  const arrivals = new Map<string, { at: number; senders: string[] }>();
  let received = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      received++;
      const id = String(request.headers["webhook-id"]);
      if (!arrivals.has(id) && id.startsWith("alrt_")) {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        arrivals.set(id, {
          at: performance.now(),
          senders: (body.data.items ?? []).map((item: { sender: string }) => item.sender),
        });
      }
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;

  // Baseline: the same number of signed POSTs, straight, with the same concurrency.
  const limits = { timeoutMs: 10_000, maxResponseBytes: 65_536, allowPrivate: true };
  const body = JSON.stringify({ type: "alert.new_sender", data: { items: [{ sender: "baseline" }] } });
  const baselineStart = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < ALERTS) {
        const n = next++;
        await sendWebhook(url, "whsec_YmVuY2hiZW5jaGJlbmNoYmVuY2g=", { id: `base_${n}`, body }, limits);
      }
    }),
  );
  const baselineMs = performance.now() - baselineStart;
  const baselineRate = ALERTS / (baselineMs / 1000);
  log(
    `baseline: ${ALERTS} signed POSTs straight to the receiver in ${(baselineMs / 1000).toFixed(2)} s: ${baselineRate.toFixed(0)}/s`,
  );

  const database = await createTestDatabase("dl_bench_alerts");
  const runtime = await openRuntime(
    { DATABASE_URL: database.url, MASTER_KEY: testMasterKey },
    { eventStoreUrl: null },
  );
  const settings = parseSettings(alertsSettings, {
    WEBHOOK_ALLOW_PRIVATE_ADDRESSES: "yes",
    // Not waiting for the resolver to name a new sender: new_sender by its address at once.
    ALERT_NAME_WAIT: "0s",
    // Each finding sent as soon as its report is evaluated: the latency is the path's, not a wait.
    ALERT_SETTLE: "0s",
    WEBHOOK_CONCURRENCY: String(CONCURRENCY),
  });
  const projector = startProjector({ store: runtime.store, db: runtime.db, projections: allProjections });
  const dataKeys = await runtimeDataKeys(runtime, { DATABASE_URL: database.url, MASTER_KEY: testMasterKey });
  const alerts = startAlerts({ store: runtime.store, db: runtime.db, settings, dataKeys });
  try {
    const { store } = runtime;
    const { tenantId } = await createTenant(
      store,
      { name: "bench", region: "global" },
      { causedBy: "bench" },
    );
    await setAlertRule(
      store,
      { tenantId, rule: "new_sender", enabled: true, params: { max_report_age_days: DAYS_PER_DOMAIN } },
      { causedBy: "bench" },
    );
    await addEndpoint(
      store,
      runtime.db,
      { tenantId, url },
      { causedBy: "bench" },
      {
        allowPrivate: true,
        keys: dataKeys,
      },
    );
    const append = (payload: AggregateReportReceived) =>
      store.append(
        streams.aggregateReport(payload.identity),
        [newEvent("AggregateReportReceived", payload, { causedBy: "bench" })],
        "no_stream",
      );
    // Each domain's first report is its baseline: one, a day before the oldest of its alerts.
    const domains = Math.ceil((ALERTS + 2 * LATENCY_REPORTS) / DAYS_PER_DOMAIN) + 1;
    for (let d = 0; d < domains; d++) {
      const domain = domainOf(d * DAYS_PER_DOMAIN);
      await addDomain(store, { tenantId, domain }, { causedBy: "bench" });
      await append(report(`baseline-${d}`, [ip(0)], domain, today - DAYS_PER_DOMAIN * day));
    }
    let sender = 1;
    /** The next alert's report: one new sender on a report day and domain of its own. */
    const nextReport = (identity: string, count = 1) => {
      const n = sender;
      const ips = Array.from({ length: count }, () => ip(sender++));
      return report(identity, ips, domainOf(n), dayOf(n));
    };

    // Latency: one report at a time, one new sender each.
    const latencyP95 = async (label: string, round: string) => {
      // By the report's one new sender, which its alert lists.
      const storedAt = new Map<string, number>();
      for (let r = 0; r < LATENCY_REPORTS; r++) {
        const stored = nextReport(`latency-${round}-${r}`);
        await append(stored);
        storedAt.set(stored.rows[0]!.sourceIp, performance.now());
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const deadline = Date.now() + 60_000;
      const arrived = () =>
        [...arrivals.values()].flatMap((arrival) =>
          arrival.senders.filter((ip) => storedAt.has(ip)).map((ip) => ({ ip, at: arrival.at })),
        );
      while (arrived().length < LATENCY_REPORTS && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      // An alert that did not arrive within the minute counts as arriving never.
      const latencies = [
        ...arrived().map((arrival) => arrival.at - storedAt.get(arrival.ip)!),
        ...Array.from({ length: LATENCY_REPORTS - arrived().length }, () => Number.POSITIVE_INFINITY),
      ].sort((a, b) => a - b);
      const ms = (value: number) => (Number.isFinite(value) ? `${value.toFixed(0)} ms` : "over 60 s");
      log(
        `latency, report stored to webhook received, ${label} (${arrived().length} of ${LATENCY_REPORTS} reports arrived, one at a time): p50 ${ms(percentile(latencies, 50))}, p95 ${ms(percentile(latencies, 95))}`,
      );
      return percentile(latencies, 95);
    };
    const alone = await latencyP95("alone", "alone");

    // The same beside a dead endpoint of another tenant (it never answers) with DEAD_PENDING due.
    const dead = createServer(() => {});
    await new Promise<void>((resolve) => dead.listen(0, "127.0.0.1", () => resolve()));
    const other = await createTenant(store, { name: "dead", region: "global" }, { causedBy: "bench" });
    const deadEndpoint = await addEndpoint(
      store,
      runtime.db,
      { tenantId: other.tenantId, url: `http://127.0.0.1:${(dead.address() as AddressInfo).port}/hook` },
      { causedBy: "bench" },
      { allowPrivate: true, keys: dataKeys },
    );
    const now = Date.now();
    for (let start = 0; start < DEAD_PENDING; start += 1000)
      await runtime.db
        .insertInto("webhook_delivery")
        .values(
          Array.from({ length: Math.min(1000, DEAD_PENDING - start) }, (_, i) => ({
            delivery_id: `alrt_dead${start + i}.${deadEndpoint.endpointId}`,
            alert_id: `alrt_dead${start + i}`,
            endpoint_id: deadEndpoint.endpointId,
            tenant_id: other.tenantId,
            body: "{}",
            status: "pending",
            attempts: 0,
            next_attempt_at: new Date(now - 60_000 + start + i),
            created_at: new Date(now),
          })),
        )
        .execute();
    const beside = await latencyP95(`beside a dead endpoint with ${DEAD_PENDING} pending`, "dead");
    log(`latency p95 beside the dead endpoint: ${(beside / alone).toFixed(2)} times the p95 alone`);
    await runtime.db
      .deleteFrom("webhook_delivery")
      .where("endpoint_id", "=", deadEndpoint.endpointId)
      .execute();
    dead.closeAllConnections();
    dead.close();

    // Throughput: ALERTS alerts, one report each (a new sender on its own day), stored as fast as they go.
    const before = arrivals.size;
    const start = performance.now();
    for (let r = 0; r < ALERTS; r++) await append(nextReport(`burst-${r}`));
    const storedMs = performance.now() - start;
    const until = Date.now() + 30 * 60_000;
    while (arrivals.size < before + ALERTS && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    const ms = performance.now() - start;
    const rate = (arrivals.size - before) / (ms / 1000);
    log(
      `alerts: ${arrivals.size - before} of ${ALERTS} delivered in ${(ms / 1000).toFixed(2)} s (reports stored in ${(storedMs / 1000).toFixed(2)} s): ${rate.toFixed(0)} deliveries/s`,
    );
    log(`ratio to the baseline: ${(rate / baselineRate).toFixed(2)} of the straight POSTs' rate`);
    log(`attempts received: ${received - ALERTS} for ${arrivals.size} alerts (more means retries)`);
  } finally {
    await alerts.stop();
    await projector.stop();
    await runtime.close();
    await database.drop();
    server.closeAllConnections();
    server.close();
  }
}

await main();
