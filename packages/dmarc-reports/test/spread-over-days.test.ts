import { describe, expect, it } from "vitest";
import { spreadOverDays } from "../src/index.js";

const DAY = 86_400;
const day0 = Date.UTC(2024, 0, 10) / 1000;

describe("spreadOverDays", () => {
  it("a report of at most 24 h keeps its own begin", () => {
    expect(spreadOverDays(day0 + 3600, day0 + 3600 + DAY, 7)).toEqual([{ t: day0 + 3600, count: 7 }]);
  });

  it("splits by seconds per UTC day; first part at begin, later ones at midnight", () => {
    // 12 h on day 0, 24 h on day 1, 12 h on day 2 → 1:2:1 of 8.
    const parts = spreadOverDays(day0 + DAY / 2, day0 + 2.5 * DAY, 8);
    expect(parts).toEqual([
      { t: day0 + DAY / 2, count: 2 },
      { t: day0 + DAY, count: 4 },
      { t: day0 + 2 * DAY, count: 2 },
    ]);
  });

  it("largest remainder: parts always add up, ties go to the earlier day", () => {
    // Two equal days, odd count: the remainder goes to the first.
    expect(spreadOverDays(day0, day0 + 2 * DAY, 3)).toEqual([
      { t: day0, count: 2 },
      { t: day0 + DAY, count: 1 },
    ]);
    for (const count of [1, 2, 5, 99, 1000, 123457]) {
      const parts = spreadOverDays(day0 + 12345, day0 + 4 * DAY + 777, count);
      expect(parts.reduce((sum, part) => sum + part.count, 0)).toBe(count);
    }
  });

  it("report_with_upper_cased_pass.xml's range (1574955300–1575304683) with 1 message lands on one day", () => {
    const parts = spreadOverDays(1574955300, 1575304683, 1);
    expect(parts).toHaveLength(1);
    expect(parts[0]!.count).toBe(1);
  });
});
