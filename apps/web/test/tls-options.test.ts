import { describe, expect, it } from "vitest";
import type { TlsDateRecord } from "../src/api/types.js";
import { failedSessionsByLabel, tlsSessionsOverTime } from "../src/charts/tls-options.js";

type Series = { name: string; data: (number | null)[] }[];

const day = (date: string, Successful: string, Failed: string): TlsDateRecord => ({
  Date: date,
  Reports: "1",
  Sessions: String(Number(Successful) + Number(Failed)),
  Successful,
  Failed,
});

describe("the TLS view's charts", () => {
  it("stacks successful and failed sessions per day, and draws the failed share where there were sessions", () => {
    const option = tlsSessionsOverTime([
      day("2016-04-05", "250", "3"),
      day("2016-04-06", "0", "0"),
      day("2016-04-07", "1", "3"),
    ]);
    expect((option.xAxis as { data: string[] }).data).toEqual(["2016-04-05", "2016-04-06", "2016-04-07"]);
    expect((option.series as Series).map((s) => [s.name, s.data])).toEqual([
      ["Successful", [250, 0, 1]],
      ["Failed", [3, 0, 3]],
      // Percent with one decimal; no point for a day without sessions.
      ["Failed share", [1.2, null, 75]],
    ]);
  });

  it("draws failed sessions per label in the order given", () => {
    const option = failedSessionsByLabel([
      { label: "starttls-not-supported", failed: 202 },
      { label: "certificate-expired", failed: 103 },
    ]);
    expect((option.yAxis as { data: string[] }).data).toEqual([
      "starttls-not-supported",
      "certificate-expired",
    ]);
    expect((option.series as Series)[0]!.data).toEqual([202, 103]);
  });
});
