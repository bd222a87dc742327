import { type Kysely, sql } from "kysely";
import type { UsersSchema } from "./schema.js";

/**
 * Failed sign-ins allowed per window: few per account (guessing one person's password), more per
 * address (several people behind one NAT mistyping). Past either, sign-in is refused until the
 * window ends, for right and wrong passwords alike, so the refusal tells nothing.
 */
export const throttleWindowMs = 15 * 60_000;
export const maxFailuresPerAccount = 5;
export const maxFailuresPerAddress = 20;

/** Keyed by the address's blind index: unknown addresses count too, and the table holds no addresses. */
export const accountKey = (emailIndex: string) => `account:${emailIndex}`;
export const addressKey = (address: string) => `address:${address}`;

/** Seconds until sign-in is allowed again for these keys; 0 when it is now. */
export async function throttledFor(
  db: Kysely<UsersSchema>,
  keys: { key: string; max: number }[],
  now = new Date(),
): Promise<number> {
  const rows = await db
    .selectFrom("sign_in_throttle")
    .selectAll()
    .where(
      "key",
      "in",
      keys.map((k) => k.key),
    )
    .execute();
  let waitMs = 0;
  for (const row of rows) {
    const max = keys.find((k) => k.key === row.key)!.max;
    const endsAt = row.window_started_at.getTime() + throttleWindowMs;
    if (row.failures >= max && endsAt > now.getTime()) waitMs = Math.max(waitMs, endsAt - now.getTime());
  }
  return Math.ceil(waitMs / 1000);
}

/** Counts a failure against each key, in a window that starts with the first failure. */
export async function recordFailure(
  db: Kysely<UsersSchema>,
  keys: string[],
  now = new Date(),
): Promise<void> {
  const windowStart = new Date(now.getTime() - throttleWindowMs);
  for (const key of keys) {
    await db
      .insertInto("sign_in_throttle")
      .values({ key, failures: 1, window_started_at: now })
      .onConflict((oc) =>
        oc.column("key").doUpdateSet({
          failures: sql<number>`case when sign_in_throttle.window_started_at <= ${windowStart}
            then 1 else sign_in_throttle.failures + 1 end`,
          window_started_at: sql<Date>`case when sign_in_throttle.window_started_at <= ${windowStart}
            then ${now} else sign_in_throttle.window_started_at end`,
        }),
      )
      .execute();
  }
}

export async function clearFailures(db: Kysely<UsersSchema>, key: string): Promise<void> {
  await db.deleteFrom("sign_in_throttle").where("key", "=", key).execute();
}
