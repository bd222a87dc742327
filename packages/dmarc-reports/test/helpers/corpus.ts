import { readFileSync } from "node:fs";
import { parsedmarcCorpus } from "../../../../test/support/corpus.js";
import type { AggregateReport, FailureReport } from "../../src/index.js";
import { parseReports } from "../../src/index.js";

export const corpusDir = parsedmarcCorpus;

export function corpusFile(relative: string): Buffer {
  return readFileSync(corpusDir + relative);
}

export async function onlyAggregate(relative: string): Promise<AggregateReport> {
  const reports = await parseReports(corpusFile(relative));
  if (reports.length !== 1 || reports[0]!.kind !== "aggregate") {
    throw new Error(
      `${relative}: expected one aggregate report, got ${reports.map((r) => r.kind).join(", ")}`,
    );
  }
  return reports[0]!.report;
}

export async function onlyFailure(relative: string): Promise<FailureReport> {
  const reports = await parseReports(corpusFile(relative));
  if (reports.length !== 1 || reports[0]!.kind !== "failure") {
    throw new Error(`${relative}: expected one failure report, got ${reports.map((r) => r.kind).join(", ")}`);
  }
  return reports[0]!.report;
}
