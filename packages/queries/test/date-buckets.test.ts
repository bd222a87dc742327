import { describe, expect, it } from "vitest";
import { bucketRange, dateOfDay } from "../src/date-buckets.js";

const DAY = 86_400;

/** The bucket's first day by Date's calendar, apart from the day arithmetic under test. */
function byCalendar(day: number, bucket: "week" | "month"): string {
  const date = new Date(day * DAY * 1000);
  if (bucket === "month") date.setUTCDate(1);
  else date.setUTCDate(date.getUTCDate() - ((date.getUTCDay() + 6) % 7));
  return date.toISOString().slice(0, 10);
}

describe("the series' buckets", () => {
  it("start weeks on Monday and months on the 1st, every day from 1970 to 2300", () => {
    const wrong: string[] = [];
    for (let day = 0; day < 120_000; day++) {
      for (const bucket of ["week", "month"] as const) {
        const first = dateOfDay(bucketRange(day * DAY, day * DAY, bucket).first);
        if (first !== byCalendar(day, bucket)) wrong.push(`${dateOfDay(day)} ${bucket}: ${first}`);
      }
    }
    expect(wrong.slice(0, 5)).toEqual([]);
  });

  it("count and name every bucket holding a second of the period", () => {
    const at = (date: string) => Date.parse(`${date}T00:00:00Z`) / 1000;
    const months = bucketRange(at("2023-11-15"), at("2024-03-10") + 5, "month");
    expect(months.count).toBe(5);
    expect(Array.from({ length: 6 }, (_, i) => dateOfDay(months.startOf(i)))).toEqual([
      "2023-11-01",
      "2023-12-01",
      "2024-01-01",
      "2024-02-01",
      "2024-03-01",
      "2024-04-01",
    ]);
    const weeks = bucketRange(at("2023-12-28"), at("2024-01-09"), "week");
    expect([weeks.count, dateOfDay(weeks.first), dateOfDay(weeks.startOf(3))]).toEqual([
      3,
      "2023-12-25",
      "2024-01-15",
    ]);
    // The last second of a day is in it; the next second is the next day's.
    expect(bucketRange(at("2024-02-28"), at("2024-03-01") - 1, "day").count).toBe(2);
    expect(bucketRange(at("2024-02-28"), at("2024-03-01"), "day").count).toBe(3);
    // Counted by arithmetic past the days Date can name.
    expect(bucketRange(0, Number.MAX_SAFE_INTEGER, "month").count).toBe(3_425_121_383);
  });
});
