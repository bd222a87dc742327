/** The contract's counter rules ("Counters" in docs/api-contract.md), row by row. */
import type { AggregateRowRecord } from "@dmarc-ledger/events";
import { describe, expect, it } from "vitest";
import { addToSums, emptySums, judgeRow } from "../src/counters.js";

const row = (overrides: Partial<AggregateRowRecord>): AggregateRowRecord => ({
  sourceIp: "192.0.2.1",
  count: 1,
  disposition: "none",
  policyDkim: "fail",
  policySpf: "fail",
  reasons: [],
  arc: null,
  headerFrom: "example.com",
  envelopeFrom: null,
  envelopeTo: null,
  dkim: [],
  spf: [],
  ...overrides,
});
const dkim = (domain: string, result: string) => ({ domain, selector: null, result, humanResult: null });
const spf = (domain: string, result: string) => ({ domain, scope: null, result });

describe("the counter rules", () => {
  it("pass DMARC on an aligned pass of either, whatever the case receivers write", () => {
    expect(judgeRow(row({ policyDkim: "Pass" })).dmarcPass).toBe(true);
    expect(judgeRow(row({ policySpf: " PASS " })).dmarcPass).toBe(true);
    expect(judgeRow(row({})).dmarcPass).toBe(false);
  });

  it("count a pass among the auth results apart from alignment", () => {
    const verdict = judgeRow(
      row({
        dkim: [dkim("a.example", "fail"), dkim("b.example", "pass")],
        spf: [spf("a.example", "softfail")],
      }),
    );
    expect(verdict).toMatchObject({ dkimPass: true, spfPass: false, dkimAligned: false, dmarcPass: false });
  });

  it("sum messages, an ARC pass counted only where DMARC did not pass", () => {
    const sums = emptySums();
    addToSums(sums, judgeRow(row({ policyDkim: "pass", arc: "pass" })), 5);
    addToSums(sums, judgeRow(row({ arc: "pass", spf: [spf("x.example", "pass")] })), 3);
    addToSums(sums, judgeRow(row({})), 2);
    expect(sums).toEqual({
      volume: 10,
      dmarcPass: 5,
      unalignedArcPass: 3,
      dkimAligned: 5,
      spfAligned: 0,
      dkimPass: 0,
      spfPass: 3,
    });
  });
});
