import { parseReports } from "@dmarc-ledger/dmarc-reports";
import { describe, expect, it } from "vitest";
import { demoReports, policyMoveDay } from "../src/demo/demo-reports.js";

const period = { seed: "demo", days: 30, lastDay: "2026-03-31" };
const encoder = new TextEncoder();

describe("the demo's reports", () => {
  it("are byte-identical for the same seed, and differ for another", () => {
    const once = demoReports(period);
    const again = demoReports({ ...period });
    expect(again.map((report) => report.text)).toEqual(once.map((report) => report.text));
    expect(again.map((report) => report.name)).toEqual(once.map((report) => report.name));
    const other = demoReports({ ...period, seed: "other" });
    expect(other.map((report) => report.text)).not.toEqual(once.map((report) => report.text));
  });

  it("give a day the same report whatever the length of the period", () => {
    const short = demoReports({ ...period, days: 5 });
    const long = demoReports(period);
    // The last day's reports of both runs, up to the policy and the spoofing run that the period places.
    const lastDayBegin = Date.parse(`${period.lastDay}T00:00:00Z`) / 1000;
    const lastDayIds = (reports: typeof short) =>
      reports
        .filter((report) => report.kind === "aggregate" && report.name.includes(`!${lastDayBegin}!`))
        .map((report) => /<report_id>(\w+)<\/report_id>/.exec(report.text)?.[1]);
    expect(lastDayIds(short).length).toBeGreaterThan(0);
    expect(lastDayIds(short)).toEqual(lastDayIds(long));
  });

  it("are read by our parser whole: aggregate and failure reports, no row dropped", async () => {
    const reports = demoReports(period);
    const kinds = new Map<string, number>();
    for (const report of reports) {
      const parsed = await parseReports(encoder.encode(report.text));
      expect(parsed, report.name).toHaveLength(1);
      const [item] = parsed;
      kinds.set(item!.kind, (kinds.get(item!.kind) ?? 0) + 1);
      expect(item!.kind, report.name).toBe(report.kind);
      if (item!.kind === "aggregate") {
        expect(item!.report.dropped, report.name).toEqual([]);
        expect(item!.report.warnings, report.name).toEqual([]);
      }
    }
    expect(kinds.get("aggregate")).toBeGreaterThan(300);
    expect(kinds.get("failure")).toBeGreaterThan(0);
  });

  it("publish p=none before the move day and p=quarantine from it", () => {
    const move = Date.parse(`${policyMoveDay(period)}T00:00:00Z`) / 1000;
    const policies = demoReports(period)
      .filter((report) => report.kind === "aggregate" && report.name.includes("!example.com!"))
      .map((report) => ({
        begin: Number(/<begin>(\d+)<\/begin>/.exec(report.text)?.[1]),
        p: /<p>(\w+)<\/p>/.exec(report.text)?.[1],
      }));
    expect(new Set(policies.filter((r) => r.begin < move).map((r) => r.p))).toEqual(new Set(["none"]));
    expect(new Set(policies.filter((r) => r.begin >= move).map((r) => r.p))).toEqual(new Set(["quarantine"]));
  });
});
