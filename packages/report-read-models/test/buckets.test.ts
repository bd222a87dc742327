/** The spans source rankings are kept for, and how far a period lies from one. */
import { describe, expect, it } from "vitest";
import {
  calendarBuckets,
  rollingBuckets,
  secondsIn,
  symmetricDifference,
} from "../src/source-rankings/buckets.js";

const at = (year: number, month: number, day = 1) => Date.UTC(year, month, day) / 1000;
const DAY = 86_400;

describe("source-ranking buckets", () => {
  it("are the UTC calendar years and months a span overlaps", () => {
    const buckets = calendarBuckets({ start: at(2025, 10, 15), end: at(2026, 1, 3) });
    expect(buckets).toEqual([
      { start: at(2025, 0), end: at(2026, 0) - 1 },
      { start: at(2025, 10), end: at(2025, 11) - 1 },
      { start: at(2025, 11), end: at(2026, 0) - 1 },
      { start: at(2026, 0), end: at(2027, 0) - 1 },
      { start: at(2026, 0), end: at(2026, 1) - 1 },
      { start: at(2026, 1), end: at(2026, 2) - 1 },
    ]);
  });

  it("roll with the day: the last 30 and 365 whole days before today", () => {
    const noon = at(2026, 2, 10) + DAY / 2;
    expect(rollingBuckets(noon)).toEqual([
      { start: at(2026, 2, 10) - 30 * DAY, end: at(2026, 2, 10) - 1 },
      { start: at(2026, 2, 10) - 365 * DAY, end: at(2026, 2, 10) - 1 },
    ]);
  });

  it("differ from a period by the seconds in one and not the other", () => {
    const december = { start: at(2025, 11), end: at(2026, 0) - 1 };
    const period = { start: at(2025, 11, 2), end: at(2026, 0, 1) + 3600 };
    expect(symmetricDifference(period, december)).toEqual([
      { start: december.start, end: period.start - 1 },
      { start: december.end + 1, end: period.end },
    ]);
    expect(secondsIn(symmetricDifference(period, december))).toBe(DAY + 3601);
    expect(symmetricDifference(december, december)).toEqual([]);
    // Apart: each whole.
    const january = { start: at(2026, 0), end: at(2026, 1) - 1 };
    const march = { start: at(2026, 2), end: at(2026, 3) - 1 };
    expect(symmetricDifference(january, march)).toEqual([january, march]);
  });
});
