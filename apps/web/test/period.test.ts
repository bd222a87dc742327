import { describe, expect, it } from "vitest";
import {
  describePeriod,
  parsePeriodChoice,
  previousPeriod,
  resolvePeriod,
  seriesBucket,
} from "../src/lib/period.js";

const now = new Date("2026-11-24T15:30:00Z");

describe("periods", () => {
  it("are whole UTC days ending today, inclusive", () => {
    const p = resolvePeriod({ period: "7d" }, now);
    expect(p).toEqual({
      start: Date.parse("2026-11-18T00:00:00Z") / 1000,
      end: Date.parse("2026-11-24T23:59:59Z") / 1000,
      from: "2026-11-18",
      to: "2026-11-24",
      days: 7,
    });
    expect(resolvePeriod({ period: "365d" }, now).from).toBe("2025-11-25");
  });

  it("reach back to the API's beginning for all time", () => {
    const all = resolvePeriod({ period: "all" }, now);
    expect(all).toMatchObject({ from: "1970-01-01", to: "2026-11-24", start: 0 });
    expect(all.end).toBe(Date.parse("2026-11-24T23:59:59Z") / 1000);
    expect(parsePeriodChoice(new URLSearchParams("period=all"))).toEqual({ period: "all" });
    expect(seriesBucket(all)).toBe("month");
    expect(describePeriod(all)).toBe("all time, to 24 Nov 2026");
  });

  it("read custom days in either order, and fall back to 30 days when unusable", () => {
    const custom = resolvePeriod({ period: "custom", from: "2018-12-31", to: "2018-01-01" }, now);
    expect(custom).toMatchObject({ from: "2018-01-01", to: "2018-12-31", days: 365 });
    expect(custom.end - custom.start + 1).toBe(365 * 86_400);
    expect(resolvePeriod({ period: "custom", from: "2018-02-30x" }, now).days).toBe(30);
    expect(parsePeriodChoice(new URLSearchParams("period=12d"))).toEqual({ period: "30d" });
  });

  it("compare with the period of the same length just before", () => {
    const p = resolvePeriod({ period: "30d" }, now);
    const before = previousPeriod(p);
    expect(before.end).toBe(p.start - 1);
    expect(before.end - before.start).toBe(p.end - p.start);
    expect(describePeriod(p)).toBe("26 Oct 2026 – 24 Nov 2026");
  });

  it("choose the finest bucket of the series the API serves for them (at most 1,000)", () => {
    const custom = (from: string, to: string) => resolvePeriod({ period: "custom", from, to }, now);
    expect(seriesBucket(resolvePeriod({ period: "365d" }, now))).toBe("day");
    expect(seriesBucket(custom("2020-01-01", "2022-09-26"))).toBe("day"); // 1,000 days
    expect(seriesBucket(custom("2020-01-01", "2022-09-27"))).toBe("week");
    expect(seriesBucket(custom("2018-01-01", "2024-12-31"))).toBe("week");
    expect(seriesBucket(custom("1990-01-01", "2024-12-31"))).toBe("month");
  });
});
