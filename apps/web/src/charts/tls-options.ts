// The TLS view's charts from the API's records: pure functions, as options.ts's.
import type { TlsDateRecord } from "../api/types.js";
import { count, share } from "../lib/format.js";
import { type ChartOption, chartFont } from "./options.js";
import { axisText, colours, gridLine } from "./palette.js";

const compact = new Intl.NumberFormat("en", { notation: "compact", maximumFractionDigits: 1 });

/**
 * SMTP TLS sessions per bucket, stacked: successful and failed, with the failed share (percent of
 * the bucket's sessions) as a line on its own axis; no point where a bucket had no session.
 */
export function tlsSessionsOverTime(records: TlsDateRecord[]): ChartOption {
  return {
    animation: false,
    textStyle: { fontFamily: chartFont, color: axisText },
    tooltip: { trigger: "axis", axisPointer: { type: "shadow" } },
    legend: { bottom: 0, icon: "roundRect", itemWidth: 12, itemHeight: 12, textStyle: { color: axisText } },
    grid: { left: 8, right: 8, top: 16, bottom: 36, containLabel: true },
    xAxis: {
      type: "category",
      data: records.map((r) => r.Date),
      axisTick: { show: false },
      axisLine: { lineStyle: { color: gridLine } },
      axisLabel: { color: axisText },
    },
    yAxis: [
      {
        type: "value",
        splitLine: { lineStyle: { color: gridLine } },
        axisLabel: { color: axisText, formatter: (value: number) => compact.format(value) },
      },
      {
        type: "value",
        min: 0,
        max: 100,
        splitLine: { show: false },
        axisLabel: { color: axisText, formatter: (value: number) => `${value}%` },
      },
    ],
    series: [
      {
        name: "Successful",
        type: "bar",
        stack: "sessions",
        barMaxWidth: 28,
        itemStyle: { color: colours.pass },
        data: records.map((r) => count(r.Successful)),
      },
      {
        name: "Failed",
        type: "bar",
        stack: "sessions",
        barMaxWidth: 28,
        itemStyle: { color: colours.fail },
        data: records.map((r) => count(r.Failed)),
      },
      {
        name: "Failed share",
        type: "line",
        yAxisIndex: 1,
        connectNulls: false,
        itemStyle: { color: colours.quarantine },
        data: records.map((r) => share(r.Failed, r.Sessions)),
      },
    ],
  };
}

/** Failed sessions per label (result type, MX, reporter), the largest at the top. */
export function failedSessionsByLabel(rows: { label: string; failed: number }[]): ChartOption {
  return {
    animation: false,
    textStyle: { fontFamily: chartFont, color: axisText },
    tooltip: { trigger: "axis", axisPointer: { type: "shadow" } },
    grid: { left: 8, right: 16, top: 8, bottom: 8, containLabel: true },
    xAxis: {
      type: "value",
      splitLine: { lineStyle: { color: gridLine } },
      axisLabel: { color: axisText, formatter: (value: number) => compact.format(value) },
    },
    yAxis: {
      type: "category",
      inverse: true,
      data: rows.map((row) => row.label),
      axisTick: { show: false },
      axisLine: { lineStyle: { color: gridLine } },
      axisLabel: { color: axisText, width: 180, overflow: "truncate" },
    },
    series: [
      {
        name: "Failed sessions",
        type: "bar",
        barMaxWidth: 22,
        itemStyle: { color: colours.fail },
        data: rows.map((row) => row.failed),
      },
    ],
  };
}
