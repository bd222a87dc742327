import { createHash } from "node:crypto";
import { type Kysely, sql } from "kysely";
import type { UsersSchema } from "./schema.js";

/**
 * Failed sign-ins slow the guesser down, not the account's owner (OWASP's authentication cheat
 * sheet, Keycloak's brute-force detection; NIST SP 800-63B 5.2.2):
 * - per (account, client address): a few free failures (a person mistyping), then a wait that
 *   doubles with each next failure, up to 15 minutes. The owner at another address is untouched.
 * - per client address, over every account: a cap per window (password spraying).
 * - per account, over every address: at most 100 failures per hour (a guesser with many
 *   addresses), enforced only against addresses the account has not signed in from lately, so
 *   the owner at their usual address still gets in.
 * While any applies, sign-in is refused for right and wrong passwords alike, so the refusal
 * tells nothing; unknown accounts count the same way (keyed by the address's blind index).
 */
export const freeFailuresPerPair = 4;
export const firstPairDelayMs = 15_000;
export const maxPairDelayMs = 15 * 60_000;
/** A pair's count is forgotten this long after its last failure. */
export const pairMemoryMs = 24 * 60 * 60_000;
export const addressWindowMs = 15 * 60_000;
export const maxFailuresPerAddress = 20;
export const accountWindowMs = 60 * 60_000;
export const maxFailuresPerAccount = 100;
/** An address the account signed in from within this long is its owner's, for the account-wide cap. */
export const familiarForMs = 90 * 24 * 60 * 60_000;

export interface ThrottleKeys {
  pair: string;
  address: string;
  account: string;
  familiar: string;
}

const digest = (text: string) => createHash("sha256").update(text).digest("base64url");

/**
 * The rows a sign-in is counted on. The account is its address's blind index, never the address;
 * the pair and the familiar mark hold a hash of index and client address.
 */
export function throttleKeys(emailIndex: string, clientAddress: string): ThrottleKeys {
  const pair = digest(`${emailIndex}\n${clientAddress}`);
  return {
    pair: `pair:${pair}`,
    address: `address:${clientAddress}`,
    account: `account:${emailIndex}`,
    familiar: `familiar:${pair}`,
  };
}

/** The wait after a pair's failures: none for the free ones, then doubling from the first delay. */
export function pairDelayMs(failures: number): number {
  if (failures <= freeFailuresPerPair) return 0;
  return Math.min(maxPairDelayMs, firstPairDelayMs * 2 ** (failures - freeFailuresPerPair - 1));
}

/** Seconds until sign-in is allowed again for these keys; 0 when it is now. */
export async function throttledFor(
  db: Kysely<UsersSchema>,
  keys: ThrottleKeys,
  now = new Date(),
): Promise<number> {
  const rows = await db
    .selectFrom("sign_in_throttle")
    .selectAll()
    .where("key", "in", [keys.pair, keys.address, keys.account, keys.familiar])
    .execute();
  const row = (key: string) => rows.find((r) => r.key === key);
  const at = now.getTime();
  const ends: number[] = [];
  const pair = row(keys.pair);
  if (pair && pair.last_failed_at.getTime() + pairMemoryMs > at) {
    ends.push(pair.last_failed_at.getTime() + pairDelayMs(pair.failures));
  }
  const address = row(keys.address);
  if (address && address.failures >= maxFailuresPerAddress) {
    ends.push(address.window_started_at.getTime() + addressWindowMs);
  }
  const account = row(keys.account);
  const familiar = row(keys.familiar);
  const isFamiliar = familiar !== undefined && familiar.window_started_at.getTime() + familiarForMs > at;
  if (account && account.failures >= maxFailuresPerAccount && !isFamiliar) {
    ends.push(account.window_started_at.getTime() + accountWindowMs);
  }
  return Math.ceil(Math.max(0, ...ends.map((end) => end - at)) / 1000);
}

/**
 * Counts a failure on a key: the count starts again at 1 once the row is older than `forgetMs`
 * (from its window's start, or from the last failure for a pair, whose count runs on while the
 * failures do).
 */
async function countFailure(
  db: Kysely<UsersSchema>,
  key: string,
  forgetMs: number,
  since: "window_started_at" | "last_failed_at",
  now: Date,
): Promise<void> {
  const forgetBefore = new Date(now.getTime() - forgetMs);
  const stale = sql<boolean>`${sql.ref(`sign_in_throttle.${since}`)} <= ${forgetBefore}`;
  await db
    .insertInto("sign_in_throttle")
    .values({ key, failures: 1, window_started_at: now, last_failed_at: now })
    .onConflict((oc) =>
      oc.column("key").doUpdateSet({
        failures: sql<number>`case when ${stale} then 1 else sign_in_throttle.failures + 1 end`,
        window_started_at: sql<Date>`case when ${stale} then ${now} else sign_in_throttle.window_started_at end`,
        last_failed_at: now,
      }),
    )
    .execute();
}

export async function recordFailure(
  db: Kysely<UsersSchema>,
  keys: ThrottleKeys,
  now = new Date(),
): Promise<void> {
  await countFailure(db, keys.pair, pairMemoryMs, "last_failed_at", now);
  await countFailure(db, keys.address, addressWindowMs, "window_started_at", now);
  await countFailure(db, keys.account, accountWindowMs, "window_started_at", now);
}

/**
 * A right password from this address: the pair starts afresh and the address becomes familiar to
 * the account. The account's count runs out its hour (resetting it would hand a guesser with many
 * addresses a fresh 100 each time the owner signs in). Stale rows of anyone go too.
 */
export async function recordSuccess(
  db: Kysely<UsersSchema>,
  keys: ThrottleKeys,
  now = new Date(),
): Promise<void> {
  await db.deleteFrom("sign_in_throttle").where("key", "=", keys.pair).execute();
  await db
    .insertInto("sign_in_throttle")
    .values({ key: keys.familiar, failures: 0, window_started_at: now, last_failed_at: now })
    .onConflict((oc) => oc.column("key").doUpdateSet({ window_started_at: now }))
    .execute();
  await db
    .deleteFrom("sign_in_throttle")
    .where((eb) =>
      eb.or([
        eb.and([
          eb("key", "not like", "familiar:%"),
          eb("last_failed_at", "<", new Date(now.getTime() - pairMemoryMs)),
        ]),
        eb.and([
          eb("key", "like", "familiar:%"),
          eb("window_started_at", "<", new Date(now.getTime() - familiarForMs)),
        ]),
      ]),
    )
    .execute();
}
