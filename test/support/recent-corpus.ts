import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { aggregateCorpus } from "./corpus.js";

const day = 86_400;

/** The start of the UTC day `daysAgo` days before today, in Unix seconds. */
export function utcDayStart(daysAgo: number, now = Date.now()): number {
  return (Math.floor(now / 1000 / day) - daysAgo) * day;
}

/**
 * A real aggregate report of the corpus (a plain XML file of test/fixtures/corpus/…/aggregate/)
 * moved to one recent UTC day: its date range is that day, its report id made its own with
 * `tag`; its senders, counts and results are the report's. Alerts look at recent report days,
 * and the corpus is years old.
 */
export async function corpusReportOnDay(name: string, dayStart: number, tag: string): Promise<string> {
  const text = await readFile(join(aggregateCorpus, name), "utf8");
  const moved = text
    .replace(/<date_range>[\s\S]*?<\/date_range>/, () => {
      return `<date_range><begin>${dayStart}</begin><end>${dayStart + day - 1}</end></date_range>`;
    })
    .replace(/<report_id>([^<]+)<\/report_id>/, (_, id: string) => `<report_id>${id}-${tag}</report_id>`);
  if (moved === text || !moved.includes(`<begin>${dayStart}</begin>`)) {
    throw new Error(`${name}: no date range or report id to move`);
  }
  return moved;
}
