/**
 * Issue 43's bench: SMTP TLS reports of BENCH_TLS_ROWS failure-detail rows (default 1,000,000)
 * over 365 days for one tenant; the p50 and p95 of GET tls_by_domain, tls_failures and
 * tls_by_date over HTTP (first page, the whole year, answer cache off and on), each against a
 * plain GROUP BY of the same answer over flat copies of the report rows in the same run (the
 * answers are compared). `BENCH_TLS_ROWS=100000 pnpm bench tls` for a quick run.
 */
import { startService } from "@dmarc-ledger/cli";
import { createTestDatabase } from "@dmarc-ledger/db/testing";
import { newEvent, streams, type TlsPolicyRecord, type TlsReportReceived } from "@dmarc-ledger/events";
import { catchUp } from "@dmarc-ledger/projection-engine";
import { openRuntime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { addDomain, createTenant } from "@dmarc-ledger/tenancy";
import { rfc8460ResultTypes } from "@dmarc-ledger/tls-reports";
import pg from "pg";
import { pino } from "pino";
import { testMasterKey } from "../support/master-key.js";
import { DAY, domainName, prng, yearEnd } from "./reporting-api/generate.js";
import { inParallel } from "./reporting-api/seed.js";

const rows = Number(process.env.BENCH_TLS_ROWS ?? 1_000_000);
const domains = 50;
const detailsPerReport = 25;
const reporters = ["Google Inc.", "Microsoft Corporation", "Yahoo Inc.", "mail.example.net"];
const maxReps = Number(process.env.BENCH_REPS ?? 30);
const minReps = 10;
const caseBudgetMs = Number(process.env.BENCH_CASE_BUDGET_MS ?? 20_000);
const p95TargetMs = 150;
const meta = { causedBy: "bench" };

const log = (line: string) => console.log(line);
const quantile = (sorted: number[], q: number) => sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
const start = yearEnd + 1 - 365 * DAY;
const end = yearEnd;
const resultTypes = [...rfc8460ResultTypes, "certificate-revoked"];

/** The `index`-th report: one domain, one day, one reporter, one sts policy of detailsPerReport details. */
function reportOf(index: number): TlsReportReceived {
  const random = prng(index + 1);
  const domain = domainName(index % domains);
  const day = Math.floor(index / domains) % 365;
  const organization = reporters[Math.floor(index / (domains * 365)) % reporters.length]!;
  const begin = start + day * DAY;
  const failures: TlsPolicyRecord["failures"] = [];
  for (let detail = 0; detail < detailsPerReport; detail++) {
    const sender = Math.floor(random() * 60_000);
    failures.push({
      resultType: resultTypes[Math.floor(random() * resultTypes.length)]!,
      // Microsoft sends no sending-mta-ip.
      sendingMtaIp: organization.startsWith("Microsoft")
        ? null
        : `10.${sender >> 8}.${sender & 255}.${detail}`,
      receivingMxHostname: `mx${detail % 4}.${domain}`,
      receivingMxHelo: null,
      receivingIp: detail % 3 === 0 ? null : `192.0.2.${detail % 4}`,
      failedSessions: 1 + Math.floor(random() * 20),
      additionalInformation: null,
      failureReasonCode: null,
    });
  }
  const failed = failures.reduce((sum, failure) => sum + failure.failedSessions, 0);
  return {
    identity: `bench-${index}`,
    organization,
    contactInfo: null,
    reportId: `bench-${index}`,
    begin,
    end: begin + DAY - 1,
    policies: [
      {
        policyType: "sts",
        policyDomain: domain,
        policyStrings: ["version: STSv1", "mode: enforce"],
        mxHosts: [`*.${domain}`],
        successfulSessions: 1000 + Math.floor(random() * 5000),
        failedSessions: failed,
        failures,
      },
    ],
    source: "bench",
    warnings: [],
  };
}

const flatTables = `
  create table bench_tls_policy (domain text, policy_type text, t bigint, successful bigint, failed bigint);
  create table bench_tls_detail (domain text, policy_type text, result_type text, sending_mta_ip text,
    receiving_mx_hostname text, receiving_ip text, organization text, t bigint, failed bigint);`;

/** The same first pages by plain GROUP BYs over the flat rows, the tenant's domains from its domain table. */
const baselines: Record<string, string> = {
  tls_by_domain: `select domain as "Domain", policy_type as "PolicyType", count(*)::text as "Reports",
      sum(successful + failed)::text as "Sessions", sum(successful)::text as "Successful", sum(failed)::text as "Failed"
    from bench_tls_policy where t >= $2 and t <= $3 and domain in (select domain from domain where tenant_id = $1)
    group by 1, 2 order by sum(successful + failed) desc, domain collate "C", policy_type collate "C" limit 100`,
  tls_failures: `select domain as "Domain", policy_type as "PolicyType", result_type as "ResultType",
      sending_mta_ip as "SendingMtaIp", receiving_mx_hostname as "ReceivingMxHostname", receiving_ip as "ReceivingIp",
      organization as "Organization", sum(failed)::text as "FailedSessions"
    from bench_tls_detail where t >= $2 and t <= $3 and domain in (select domain from domain where tenant_id = $1)
    group by 1, 2, 3, 4, 5, 6, 7
    order by sum(failed) desc, domain collate "C", policy_type collate "C", result_type collate "C",
      sending_mta_ip collate "C", receiving_mx_hostname collate "C", receiving_ip collate "C",
      organization collate "C" limit 100`,
  tls_by_date: `with sums as (select t / 86400 as day, count(*) as reports, sum(successful) as successful,
      sum(failed) as failed from bench_tls_policy
      where t >= $2 and t <= $3 and domain in (select domain from domain where tenant_id = $1) group by 1)
    select to_char(date '1970-01-01' + d.day::int, 'YYYY-MM-DD') as "Date", coalesce(s.reports, 0)::text as "Reports",
      coalesce(s.successful + s.failed, 0)::text as "Sessions", coalesce(s.successful, 0)::text as "Successful",
      coalesce(s.failed, 0)::text as "Failed"
    from generate_series($2::bigint / 86400, $3::bigint / 86400) as d(day) left join sums s on s.day = d.day
    order by d.day limit 100`,
};

async function main(): Promise<void> {
  const reports = Math.ceil(rows / detailsPerReport);
  log(
    `scale: ${(reports * detailsPerReport).toLocaleString("en")} failure-detail rows in ${reports.toLocaleString("en")} TLS reports, ${domains} domains, 365 days`,
  );
  const database = await createTestDatabase("dl_bench_tls");
  const runtime = await openRuntime(
    {},
    { database: { kind: "postgres", url: database.url }, eventStoreUrl: null },
  );
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const tenant = await createTenant(runtime.store, { name: "bench", region: "global" }, meta);
    for (let i = 0; i < domains; i++)
      await addDomain(runtime.store, { tenantId: tenant.tenantId, domain: domainName(i) }, meta);
    await client.query(flatTables);
    let next = 0;
    const appendStarted = performance.now();
    const policyRows: unknown[][] = [[], [], [], [], []];
    const detailRows: unknown[][] = [[], [], [], [], [], [], [], [], []];
    const flush = async () => {
      await client.query(
        "insert into bench_tls_policy select * from unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[])",
        policyRows.map((column) => column.splice(0)),
      );
      await client.query(
        `insert into bench_tls_detail select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
          $6::text[], $7::text[], $8::bigint[], $9::bigint[])`,
        detailRows.map((column) => column.splice(0)),
      );
    };
    let flushing = Promise.resolve();
    await inParallel(
      () => (next < reports ? next++ : null),
      6,
      async (index) => {
        const report = reportOf(index);
        await runtime.store.append(
          streams.tlsReport(report.identity),
          [newEvent("TlsReportReceived", report, meta)],
          "no_stream",
        );
        for (const policy of report.policies) {
          for (const [column, value] of [
            policy.policyDomain,
            policy.policyType,
            report.begin,
            policy.successfulSessions,
            policy.failedSessions,
          ].entries())
            policyRows[column]!.push(value);
          for (const failure of policy.failures) {
            const values = [
              policy.policyDomain,
              policy.policyType,
              failure.resultType,
              failure.sendingMtaIp ?? "",
              failure.receivingMxHostname ?? "",
              failure.receivingIp ?? "",
              report.organization,
              report.begin,
              failure.failedSessions,
            ];
            for (const [column, value] of values.entries()) detailRows[column]!.push(value);
          }
        }
        // One flush at a time on the one client: the next waits for the one before.
        if (detailRows[0]!.length >= 20_000) {
          flushing = flushing.then(flush);
          await flushing;
        }
      },
    );
    await flush();
    log(
      `appended ${reports.toLocaleString("en")} reports in ${((performance.now() - appendStarted) / 1000).toFixed(1)} s`,
    );
    const projectStarted = performance.now();
    await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
    const projectMs = performance.now() - projectStarted;
    const facts = await client.query<{ n: string }>("select count(*)::text as n from tls_failure_fact");
    log(
      `projected in ${(projectMs / 1000).toFixed(1)} s: ${Math.round(reports / (projectMs / 1000)).toLocaleString("en")} reports/s, ${Number(facts.rows[0]!.n).toLocaleString("en")} rows of tls_failure_fact`,
    );
    await client.query("vacuum analyze");

    for (const [label, cacheBytes] of [
      ["answer cache off", "0"],
      ["answer cache on", String(64 * 1024 * 1024)],
    ] as const) {
      const service = await startService({
        runtime,
        env: {
          MASTER_KEY: testMasterKey,
          RATE_LIMIT_PER_SECOND: "100000",
          RATE_LIMIT_BURST: "100000",
          API_ANSWER_CACHE_BYTES: cacheBytes,
          RANKING_INTERVAL_MS: String(86_400_000),
        },
        port: 0,
        logger: pino({ level: "silent" }),
        bootstrapTenant: false,
      });
      try {
        for (const endpoint of Object.keys(baselines)) {
          const url = `${service.apiRoot}${endpoint}?start=${start}&end=${end}&per_page=100`;
          const callApi = async () => {
            const response = await fetch(url, { headers: { Authorization: `Bearer ${tenant.apiKey}` } });
            const body = await response.text();
            if (response.status !== 200) throw new Error(`${url}: ${response.status} ${body.slice(0, 300)}`);
            return (JSON.parse(body) as { records: unknown[] }).records;
          };
          const baseline = async () =>
            (await client.query(baselines[endpoint]!, [tenant.tenantId, start, end])).rows;
          let t0 = performance.now();
          const apiAnswer = await callApi();
          const apiMs = performance.now() - t0;
          t0 = performance.now();
          const baseAnswer = await baseline();
          const baseMs = performance.now() - t0;
          const same = JSON.stringify(apiAnswer) === JSON.stringify(baseAnswer);
          const reps = Math.max(minReps, Math.min(maxReps, Math.floor(caseBudgetMs / (apiMs + baseMs))));
          const apiTimes: number[] = [];
          const baseTimes: number[] = [];
          for (let i = 0; i < reps; i++) {
            t0 = performance.now();
            await callApi();
            apiTimes.push(performance.now() - t0);
            t0 = performance.now();
            await baseline();
            baseTimes.push(performance.now() - t0);
          }
          apiTimes.sort((a, b) => a - b);
          baseTimes.sort((a, b) => a - b);
          const api = { p50: quantile(apiTimes, 0.5), p95: quantile(apiTimes, 0.95) };
          const base = { p50: quantile(baseTimes, 0.5), p95: quantile(baseTimes, 0.95) };
          log(
            `${endpoint}, 365 days, first page (${label}, ${reps} reps): API p50 ${api.p50.toFixed(1)} ms, p95 ${api.p95.toFixed(1)} ms; ` +
              `GROUP BY baseline p50 ${base.p50.toFixed(1)} ms, p95 ${base.p95.toFixed(1)} ms; ×${(base.p95 / api.p95).toFixed(2)} at p95; ` +
              `p95 ≤ ${p95TargetMs} ms: target ${api.p95 <= p95TargetMs ? "met" : "MISSED"}; ${same ? "answers agree" : "ANSWERS DIFFER"}`,
          );
        }
      } finally {
        await service.stop();
      }
    }
  } finally {
    await client.end();
    await runtime.close();
    await database.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
