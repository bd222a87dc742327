import { newEvent, streams } from "@dmarc-ledger/events";
import type { Runtime } from "@dmarc-ledger/runtime";
import { addDomain, createTenant } from "@dmarc-ledger/tenancy";
import { domainName, type FlatRow, groupName, type Scale, TrafficGenerator } from "./generate.js";

const meta = { causedBy: "bench" };

/** Runs `work` for every item `next` hands out, `n` at a time. */
export async function inParallel<T>(
  next: () => T | null,
  n: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  const worker = async () => {
    for (let item = next(); item !== null; item = next()) await work(item);
  };
  await Promise.all(Array.from({ length: n }, worker));
}

export interface SeededTenant {
  tenantId: string;
  apiKey: string;
  generator: TrafficGenerator;
  reports: number;
  appendMs: number;
}

/**
 * The bench tenant of `scale`: its domains (every tenth in no group) and its aggregate reports,
 * one event per report, appended to the store (not projected: the caller times that). Each
 * generated row is also handed to `onRow` (the baselines keep them).
 */
export async function seedTenant(
  runtime: Pick<Runtime, "store">,
  scale: Scale,
  options: { onRow?: (row: FlatRow) => void; progress?: (line: string) => void } = {},
): Promise<SeededTenant> {
  const { store } = runtime;
  const tenant = await createTenant(store, { name: "bench", region: "global" }, meta);
  let nextDomain = 0;
  await inParallel(
    () => (nextDomain < scale.domains ? nextDomain++ : null),
    6,
    async (i) => {
      const domain = domainName(i);
      await addDomain(store, { tenantId: tenant.tenantId, domain }, meta);
      if (i % 10 !== 9) {
        await store.append(
          streams.domain(domain),
          [
            newEvent(
              "DomainGroupSet",
              { domain, tenantId: tenant.tenantId, group: groupName(i % scale.groups) },
              meta,
            ),
          ],
          "stream_exists",
        );
      }
    },
  );

  const generator = new TrafficGenerator(scale);
  const onRow = options.onRow ?? (() => {});
  let reports = 0;
  let lastProgress = 0;
  const started = performance.now();
  await inParallel(
    () => generator.next(onRow),
    6,
    async (report) => {
      await store.append(
        streams.aggregateReport(report.payload.identity),
        [newEvent("AggregateReportReceived", report.payload, meta)],
        "no_stream",
      );
      reports++;
      if (generator.rowsProduced - lastProgress >= scale.rows / 10) {
        lastProgress = generator.rowsProduced;
        options.progress?.(`appended ${generator.rowsProduced.toLocaleString("en")} rows`);
      }
    },
  );
  return {
    tenantId: tenant.tenantId,
    apiKey: tenant.apiKey,
    generator,
    reports,
    appendMs: performance.now() - started,
  };
}

/** Failure reports of the bench tenant, appended (not projected). */
export async function seedFailureReports(
  runtime: Pick<Runtime, "store">,
  generator: TrafficGenerator,
  count: number,
) {
  const reports: ReturnType<TrafficGenerator["forensic"]>[] = [];
  let next = 0;
  await inParallel(
    () => (next < count ? next++ : null),
    6,
    async (i) => {
      const report = generator.forensic(i);
      reports.push(report);
      await runtime.store.append(
        streams.failureReport(report.identity),
        [newEvent("ForensicReportReceived", report, meta)],
        "no_stream",
      );
    },
  );
  return reports;
}
