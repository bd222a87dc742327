import { type Kysely, sql, type Transaction } from "kysely";
import type { EffectiveRule } from "./rules.js";
import type { AlertsSchema } from "./schema.js";

type Handle = Kysely<AlertsSchema> | Transaction<AlertsSchema>;

const dayMs = 86_400_000;
const utcDay = (at: Date) => at.toISOString().slice(0, 10);

export interface FailureShare {
  /** Above the threshold, or far above the domain's baseline. */
  verdict: boolean;
  /** Which of the two, in words. */
  why: string;
  figures: {
    messages: number;
    failed: number;
    failedPercent: number;
    thresholdPercent: number;
    windowDays: number;
    baselinePercent: number | null;
    aboveBaseline: boolean;
  };
}

/**
 * dmarc_failure_share of the window of `window_days` ending on a report day, from the messages
 * per domain and day as the evaluator has counted them so far (alert_domain_day); null when the
 * window has fewer than `min_messages`.
 */
export async function failureShareOf(
  handle: Handle,
  domain: string,
  day: string,
  rule: EffectiveRule,
): Promise<FailureShare | null> {
  const windowDays = rule.params.window_days!;
  const first = utcDay(new Date(Date.parse(`${day}T00:00:00Z`) - (windowDays - 1) * dayMs));
  const window = await sums(handle, domain, first, day, true);
  if (window.messages < rule.params.min_messages!) return null;
  const share = Math.round((window.failed * 10_000) / window.messages) / 100;
  const overThreshold = window.failed * 100 > rule.params.threshold_percent! * window.messages;
  // The domain's own baseline: its share over the baseline_days before the window.
  const factor = rule.params.baseline_factor!;
  let baselineShare: number | null = null;
  if (factor > 0) {
    const baselineFirst = utcDay(
      new Date(Date.parse(`${first}T00:00:00Z`) - rule.params.baseline_days! * dayMs),
    );
    const baseline = await sums(handle, domain, baselineFirst, first, false);
    if (baseline.messages >= rule.params.min_messages!) {
      baselineShare = Math.round((baseline.failed * 10_000) / baseline.messages) / 100;
    }
  }
  // Far above its baseline: `factor` times it, and at least 2 points more (0.1% to 0.3% is noise).
  const overBaseline =
    baselineShare !== null && share >= factor * baselineShare && share >= baselineShare + 2;
  return {
    verdict: overThreshold || overBaseline,
    why: overThreshold
      ? `threshold ${rule.params.threshold_percent}%`
      : `${factor} times its ${baselineShare}% of the ${rule.params.baseline_days} days before`,
    figures: {
      messages: window.messages,
      failed: window.failed,
      failedPercent: share,
      thresholdPercent: rule.params.threshold_percent!,
      windowDays,
      baselinePercent: baselineShare,
      aboveBaseline: overBaseline,
    },
  };
}

/** Messages and failing messages of a domain from one day to another (the last included or not). */
async function sums(
  handle: Handle,
  domain: string,
  from: string,
  to: string,
  toIncluded: boolean,
): Promise<{ messages: number; failed: number }> {
  const row = await handle
    .selectFrom("alert_domain_day")
    .select([
      sql<string>`coalesce(sum(messages), 0)::text`.as("messages"),
      sql<string>`coalesce(sum(failed), 0)::text`.as("failed"),
    ])
    .where("domain", "=", domain)
    .where("day", ">=", from)
    .where("day", toIncluded ? "<=" : "<", to)
    .executeTakeFirstOrThrow();
  return { messages: Number(row.messages), failed: Number(row.failed) };
}
