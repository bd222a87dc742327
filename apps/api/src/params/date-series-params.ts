import {
  type BucketRange,
  bucketRange,
  coarserBucket,
  type DateBucket,
  type DateSeriesQuery,
  dateBuckets,
  dateOfDay,
  maxBuckets,
} from "@dmarc-ledger/queries";
import { badParameter } from "../api-error.js";
import { parseListParams } from "./list-params.js";

/** 9999-12-31: a later day has no YYYY-MM-DD. */
const lastNamedDay = 2_932_896;

/**
 * aggregate_by_date's parameters: a list endpoint's, plus `bucket` (day, week or month) and
 * `group`; a period of more than maxBuckets buckets is refused with the coarser bucket to ask for.
 */
export function parseDateSeriesParams(
  query: Record<string, unknown>,
  tenantId: string,
  nowSeconds?: number,
): { query: DateSeriesQuery; range: BucketRange } {
  const { bucket: rawBucket, group: rawGroup, ...listed } = query;
  const page = parseListParams(listed, tenantId, nowSeconds);
  const bucket = bucketParam(rawBucket);
  const group = groupParam(rawGroup);
  const range = bucketRange(page.start, page.end, bucket);
  if (range.count > maxBuckets) {
    const coarser = coarserBucket(bucket);
    const lastDay = Math.floor(page.end / 86_400);
    const period = `from ${dateOfDay(Math.floor(page.start / 86_400))} to ${
      lastDay > lastNamedDay ? "after 9999-12-31" : dateOfDay(lastDay)
    }`;
    throw badParameter(
      "bucket",
      `the period ${period} has ${range.count} ${bucket}s; at most ${maxBuckets} are served: ${
        coarser ? `ask for bucket=${coarser}, or a shorter period.` : "ask for a shorter period."
      }`,
    );
  }
  return { query: { ...page, bucket, ...(group === undefined ? {} : { group }) }, range };
}

function bucketParam(raw: unknown): DateBucket {
  if (raw === undefined) return "day";
  if (typeof raw !== "string") throw badParameter("bucket", "give it once.");
  if (!(dateBuckets as readonly string[]).includes(raw)) {
    const shown = raw.length > 40 ? `${raw.slice(0, 40)}…` : raw;
    throw badParameter("bucket", `must be one of ${dateBuckets.join(", ")}, not "${shown}".`);
  }
  return raw as DateBucket;
}

function groupParam(raw: unknown): string | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== "string" || raw.trim() === "") throw badParameter("group", "give one group name, once.");
  return raw.trim();
}
