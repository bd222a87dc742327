import { describe, expect, it } from "vitest";
import type { Counters, DateRecord, DomainRecord } from "../src/api/types.js";
import { alignment, passFailByDomain, sumCounters, volumeOverTime } from "../src/charts/options.js";

const counters = (over: Partial<Counters>): Counters => ({
  Volume: "0",
  DMARC: "0",
  DMARCUnaligned: "0",
  DMARCUnalignedARCPass: null,
  DKIMAligned: "0",
  DKIM: "0",
  DKIMFailed: "0",
  SPFAligned: "0",
  SPF: "0",
  SPFFailed: "0",
  ...over,
});

type Series = { name: string; data: number[] }[];

describe("chart options", () => {
  it("stack each domain's passes and failures, the ten largest", () => {
    const records: DomainRecord[] = Array.from({ length: 12 }, (_, i) => ({
      Domain: `d${i}.example`,
      ...counters({ Volume: String(100 - i), DMARC: String(90 - i), DMARCUnaligned: "10" }),
    }));
    const option = passFailByDomain(records);
    expect((option.yAxis as { data: string[] }).data).toHaveLength(10);
    const series = option.series as Series;
    expect(series.map((s) => s.name)).toEqual(["DMARC pass", "DMARC fail"]);
    expect(series[0]!.data[0]! + series[1]!.data[0]!).toBe(100);
  });

  it("split SPF and DKIM into aligned, passed unaligned and failed, adding up to the volume", () => {
    const totals = sumCounters([
      counters({
        Volume: "10",
        SPF: "8",
        SPFAligned: "5",
        SPFFailed: "2",
        DKIM: "9",
        DKIMAligned: "9",
        DKIMFailed: "1",
      }),
      counters({
        Volume: "5",
        SPF: "5",
        SPFAligned: "5",
        SPFFailed: "0",
        DKIM: "0",
        DKIMAligned: "0",
        DKIMFailed: "5",
      }),
    ]);
    expect(totals).toMatchObject({ Volume: "15", SPF: "13", SPFAligned: "10", DKIMFailed: "6" });
    const series = alignment(totals).series as Series;
    const spf = series.map((s) => s.data[0]!);
    const dkim = series.map((s) => s.data[1]!);
    expect(spf).toEqual([10, 3, 2]);
    expect(dkim).toEqual([9, 0, 6]);
  });

  it("stack a day's passes and failures by what the receiver did", () => {
    const day: DateRecord = {
      Date: "2026-11-01",
      ...counters({ Volume: "20", DMARC: "12", DMARCUnaligned: "8" }),
      DispositionNone: "15",
      DispositionQuarantine: "3",
      DispositionReject: "2",
    };
    const series = volumeOverTime([day]).series as Series;
    expect(series.map((s) => [s.name, s.data[0]])).toEqual([
      ["Pass", 12],
      ["Fail, delivered", 3],
      ["Fail, quarantined", 3],
      ["Fail, rejected", 2],
    ]);
  });

  it("stack up to the volume when passing messages were quarantined, or the word was another", () => {
    const day: DateRecord = {
      Date: "2026-11-02",
      ...counters({ Volume: "20", DMARC: "15", DMARCUnaligned: "5" }),
      // Two passing messages quarantined by a receiver's local policy; one "pass" of an old draft.
      DispositionNone: "12",
      DispositionQuarantine: "6",
      DispositionReject: "1",
    };
    const series = volumeOverTime([day]).series as Series;
    expect(series.map((s) => [s.name, s.data[0]])).toEqual([
      ["Pass", 15],
      ["Fail, delivered", 0],
      ["Fail, quarantined", 5],
      ["Fail, rejected", 0],
    ]);
    expect(series.reduce((sum, s) => sum + s.data[0]!, 0)).toBe(20);
  });
});
