// Chart options from the API's records: pure functions, so that what a chart shows can be
// checked against the records without a browser (test/chart-options.test.ts).
import type { Counters, DateRecord, DomainRecord, OrganizationRecord, SourceRecord } from "../api/types.js";
import { count } from "../lib/format.js";
import { axisText, colours, gridLine } from "./palette.js";

/** What every chart option has: ECharts' option object, typed loosely here on purpose. */
export type ChartOption = Record<string, unknown>;

/**
 * The page's font by name: ECharts measures text with it to lay labels and the legend out, and
 * "inherit" would measure with a default font and overlap them.
 */
export const chartFont = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';

const base = {
  animation: false,
  textStyle: { fontFamily: chartFont, color: axisText },
  tooltip: { trigger: "axis", axisPointer: { type: "shadow" } },
  legend: { bottom: 0, icon: "roundRect", itemWidth: 12, itemHeight: 12, textStyle: { color: axisText } },
};

const valueAxis = {
  type: "value",
  splitLine: { lineStyle: { color: gridLine } },
  axisLabel: { color: axisText, formatter: (value: number) => compactNumber(value) },
};

function compactNumber(value: number): string {
  return new Intl.NumberFormat("en", { notation: "compact", maximumFractionDigits: 1 }).format(value);
}

interface Bar {
  name: string;
  colour: string;
  values: number[];
}

/** The height that fits `rows` bars of stackedRows, its axis and its legend. */
export const rowsChartHeight = (rows: number) => Math.max(150, 84 + rows * 30);

/** Horizontal stacked bars, one row per label, the largest at the top. */
function stackedRows(labels: string[], bars: Bar[]): ChartOption {
  return {
    ...base,
    grid: { left: 8, right: 16, top: 8, bottom: 36, containLabel: true },
    xAxis: valueAxis,
    yAxis: {
      type: "category",
      inverse: true,
      data: labels,
      axisTick: { show: false },
      axisLine: { lineStyle: { color: gridLine } },
      axisLabel: { color: axisText, width: 160, overflow: "truncate" },
    },
    series: bars.map((bar) => ({
      name: bar.name,
      type: "bar",
      stack: "total",
      barMaxWidth: 22,
      itemStyle: { color: bar.colour },
      data: bar.values,
    })),
  };
}

const passFail = (records: Counters[]): Bar[] => [
  { name: "DMARC pass", colour: colours.pass, values: records.map((r) => count(r.DMARC)) },
  { name: "DMARC fail", colour: colours.fail, values: records.map((r) => count(r.DMARCUnaligned)) },
];

/** Messages that passed and failed DMARC, per domain (the ten with the most). */
export function passFailByDomain(records: DomainRecord[]): ChartOption {
  const top = records.slice(0, 10);
  return stackedRows(
    top.map((r) => r.Domain),
    passFail(top),
  );
}

/** The same per reporting organisation. */
export function passFailByReporter(records: OrganizationRecord[]): ChartOption {
  const top = records.slice(0, 10);
  return stackedRows(
    top.map((r) => r.Organization),
    passFail(top),
  );
}

/**
 * The same per source IP (with its reverse DNS name when known): its records of every domain and
 * reporter summed, the ten IPs with the most messages.
 */
export function passFailBySource(records: SourceRecord[]): ChartOption {
  const byIp = new Map<string, { label: string; counters: Counters[] }>();
  for (const record of records) {
    const entry = byIp.get(record.SourceIp) ?? {
      label: record.SourceDomain ? `${record.SourceIp} (${record.SourceDomain})` : record.SourceIp,
      counters: [],
    };
    entry.counters.push(record);
    byIp.set(record.SourceIp, entry);
  }
  const top = [...byIp.values()]
    .map((entry) => ({ label: entry.label, sums: sumCounters(entry.counters) }))
    .sort((a, b) => count(b.sums.Volume) - count(a.sums.Volume))
    .slice(0, 10);
  return stackedRows(
    top.map((entry) => entry.label),
    passFail(top.map((entry) => entry.sums)),
  );
}

/** Sums the counters of records (the totals of a period). */
export function sumCounters(records: Counters[]): Counters {
  const keys = [
    "Volume",
    "DMARC",
    "DMARCUnaligned",
    "DKIMAligned",
    "DKIM",
    "DKIMFailed",
    "SPFAligned",
    "SPF",
    "SPFFailed",
  ] as const;
  const sums = Object.fromEntries(keys.map((key) => [key, 0])) as Record<(typeof keys)[number], number>;
  let arc = 0;
  for (const record of records) {
    for (const key of keys) sums[key] += count(record[key]);
    arc += count(record.DMARCUnalignedARCPass);
  }
  return {
    ...(Object.fromEntries(keys.map((key) => [key, String(sums[key])])) as Record<
      (typeof keys)[number],
      string
    >),
    DMARCUnalignedARCPass: String(arc),
  };
}

/**
 * SPF and DKIM, each split into aligned (what DMARC counts), passed but not aligned with the
 * From domain, and failed.
 */
export function alignment(totals: Counters): ChartOption {
  const spfAligned = count(totals.SPFAligned);
  const dkimAligned = count(totals.DKIMAligned);
  return stackedRows(
    ["SPF", "DKIM"],
    [
      { name: "Aligned", colour: colours.pass, values: [spfAligned, dkimAligned] },
      {
        name: "Passed, not aligned",
        colour: colours.passLight,
        values: [Math.max(0, count(totals.SPF) - spfAligned), Math.max(0, count(totals.DKIM) - dkimAligned)],
      },
      { name: "Failed", colour: colours.fail, values: [count(totals.SPFFailed), count(totals.DKIMFailed)] },
    ],
  );
}

/**
 * Messages per bucket (day, week or month), stacked by result: passed, and failed by what the
 * receiver did. Receivers report the disposition of every message, passing ones too (none,
 * mostly), so the failures are split as far as the counts allow: quarantined and rejected up to
 * the failures, the rest of them delivered. The stack adds up to the bucket's volume.
 */
export function volumeOverTime(records: DateRecord[]): ChartOption {
  const days = records.map((r) => r.Date);
  const split = records.map((r) => {
    const failed = count(r.DMARCUnaligned);
    const quarantined = Math.min(failed, count(r.DispositionQuarantine));
    const rejected = Math.min(failed - quarantined, count(r.DispositionReject));
    return { delivered: failed - quarantined - rejected, quarantined, rejected };
  });
  const series: Bar[] = [
    { name: "Pass", colour: colours.pass, values: records.map((r) => count(r.DMARC)) },
    { name: "Fail, delivered", colour: colours.none, values: split.map((s) => s.delivered) },
    { name: "Fail, quarantined", colour: colours.quarantine, values: split.map((s) => s.quarantined) },
    { name: "Fail, rejected", colour: colours.fail, values: split.map((s) => s.rejected) },
  ];
  return {
    ...base,
    grid: { left: 8, right: 16, top: 16, bottom: 36, containLabel: true },
    xAxis: {
      type: "category",
      data: days,
      axisTick: { show: false },
      axisLine: { lineStyle: { color: gridLine } },
      axisLabel: { color: axisText },
    },
    yAxis: valueAxis,
    series: series.map((bar) => ({
      name: bar.name,
      type: "bar",
      stack: "total",
      barMaxWidth: 28,
      itemStyle: { color: bar.colour },
      data: bar.values,
    })),
  };
}
