import type { EventStore } from "@dmarc-ledger/event-store";
import { type ForensicReportReceived, newEvent, streams } from "@dmarc-ledger/events";
import { addDomain, type CreatedTenant, createTenant } from "@dmarc-ledger/tenancy";
import { domainName, type FlatRow, groupName, type Scale, type TrafficGenerator } from "./generate.js";

const meta = { causedBy: "bench" };

/** Runs `work` for every item with `n` at a time. */
export async function pool<T>(
  next: () => T | null,
  n: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  const worker = async () => {
    for (let item = next(); item !== null; item = next()) await work(item);
  };
  await Promise.all(Array.from({ length: n }, worker));
}

/** The bench's tenant, its domains and groups (every tenth domain in no group). */
export async function createBenchTenant(store: EventStore, scale: Scale): Promise<CreatedTenant> {
  const tenant = await createTenant(store, { name: "bench", region: "global" }, meta);
  let nextDomain = 0;
  await pool(
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
  return tenant;
}

/**
 * Every generated aggregate report, one event each; `onRow` sees each row (the baseline's COPY
 * lines), `onProgress` each tenth of the rows. Returns the number of reports.
 */
export async function appendReports(
  store: EventStore,
  generator: TrafficGenerator,
  scale: Scale,
  options: { onRow?: (row: FlatRow) => void; onProgress?: (rows: number) => void } = {},
): Promise<number> {
  let reports = 0;
  let lastProgress = 0;
  await pool(
    () => generator.next((row) => options.onRow?.(row)),
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
        options.onProgress?.(generator.rowsProduced);
      }
    },
  );
  return reports;
}

/** The scale's failure reports, one event each. */
export async function appendFailureReports(
  store: EventStore,
  generator: TrafficGenerator,
  scale: Scale,
): Promise<ForensicReportReceived[]> {
  const forensic: ForensicReportReceived[] = [];
  let nextForensic = 0;
  await pool(
    () => (nextForensic < scale.forensic ? nextForensic++ : null),
    6,
    async (i) => {
      const report = generator.forensic(i);
      forensic.push(report);
      await store.append(
        streams.failureReport(report.identity),
        [newEvent("ForensicReportReceived", report, meta)],
        "no_stream",
      );
    },
  );
  return forensic;
}
