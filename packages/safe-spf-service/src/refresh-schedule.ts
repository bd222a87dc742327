import { type Kysely, sql } from "kysely";
import type { SafeSpfRefreshSettings } from "./refresh-settings.js";
import type { SafeSpfAndDomainSchema } from "./schema.js";

/** When a record built from answers whose shortest TTL is `minTtl` seconds is due again. */
export function refreshDelayMs(minTtl: number | null, settings: SafeSpfRefreshSettings): number {
  const ttlMs = minTtl === null ? settings.maxRefreshMs : minTtl * 1000;
  return Math.min(settings.maxRefreshMs, Math.max(settings.minRefreshMs, ttlMs));
}

/** The wait before try `failures + 1` after `failures` failed in a row: doubling, up to the longest refresh. */
export function backoffMs(failures: number, baseMs: number, settings: SafeSpfRefreshSettings): number {
  return Math.min(settings.maxRefreshMs, baseMs * 2 ** Math.min(Math.max(failures - 1, 0), 30));
}

const milliseconds = (ms: number) => sql`${`${Math.round(ms)} milliseconds`}::interval`;

/**
 * Puts every domain with a Safe SPF record on the schedule, and puts it back at its record's due
 * time when a newer record was computed than the schedule knows of (a new original, or a restart
 * after a lost row): the schedule is derived from the projected events, last_computed + TTL.
 * A failure the worker recorded for the newest original counts as the one being retried.
 */
export async function syncSchedule(
  db: Kysely<SafeSpfAndDomainSchema>,
  settings: SafeSpfRefreshSettings,
): Promise<number> {
  const delay = sql`make_interval(secs => least(greatest(coalesce(s.min_ttl * 1000, ${settings.maxRefreshMs}),
    ${settings.minRefreshMs}), ${settings.maxRefreshMs}) / 1000.0)`;
  const result = await sql`
    insert into safe_spf_refresh (domain, next_due, last_checked, valid_until, failures, failure, failing_since)
    select s.domain, s.last_computed + ${delay}, s.last_computed, s.last_computed + ${delay},
      case when s.status = 'failed' then 1 else 0 end,
      case when s.status = 'failed' then s.last_error end,
      case when s.status = 'failed' then s.updated_at end
    from safe_spf s left join safe_spf_refresh r on r.domain = s.domain
    where s.last_computed is not null and s.records <> '[]'
      and (r.domain is null or r.last_checked is null or s.last_computed > r.last_checked)
    on conflict (domain) do update set next_due = excluded.next_due, last_checked = excluded.last_checked,
      valid_until = excluded.valid_until, failures = excluded.failures, failure = excluded.failure,
      failing_since = excluded.failing_since`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

export interface ClaimedDomain {
  domain: string;
  failures: number;
  failure: string | null;
  lastChecked: Date | null;
}

/**
 * Leases up to `limit` due domains to `owner`. SKIP LOCKED lets refreshers in several processes
 * claim side by side without waiting on each other or taking the same domain; a crashed owner's
 * lease runs out after `leaseMs` and the domain is due for the others.
 */
export async function claimDue(
  db: Kysely<SafeSpfAndDomainSchema>,
  owner: string,
  limit: number,
  leaseMs: number,
): Promise<ClaimedDomain[]> {
  const result = await sql<{
    domain: string;
    failures: number;
    failure: string | null;
    last_checked: Date | string | null;
  }>`
    update safe_spf_refresh set lease_owner = ${owner}, lease_until = now() + ${milliseconds(leaseMs)}
    where domain in (
      select domain from safe_spf_refresh
      where next_due <= now() and (lease_until is null or lease_until < now())
        -- A domain no tenant has (removed) is not kept current; added again, it is due again.
        and exists (select 1 from domain d where d.domain = safe_spf_refresh.domain)
      order by next_due limit ${limit}
      for update skip locked)
    returning domain, failures, failure, last_checked`.execute(db);
  return result.rows.map((row) => ({
    domain: row.domain,
    failures: row.failures,
    failure: row.failure,
    lastChecked: row.last_checked === null ? null : new Date(row.last_checked),
  }));
}

/** A computation that succeeded (changed or not), from `startedAt`: due again when its answers expire. */
export interface CheckedDomain {
  domain: string;
  startedAt: Date;
  delayMs: number;
}

/**
 * Records successful computations, many in one statement: at thousands of domains per pass a
 * round trip per domain costs more than the computation.
 */
export async function recordChecked(
  db: Kysely<SafeSpfAndDomainSchema>,
  owner: string,
  checked: CheckedDomain[],
): Promise<void> {
  for (let offset = 0; offset < checked.length; offset += 1000) {
    const rows = checked
      .slice(offset, offset + 1000)
      .map(
        ({ domain, startedAt, delayMs }) =>
          sql`(${domain}, ${startedAt.toISOString()}::timestamptz, ${new Date(startedAt.getTime() + delayMs).toISOString()}::timestamptz)`,
      );
    await sql`
      update safe_spf_refresh r set last_checked = v.checked, valid_until = v.until, next_due = v.until,
        failures = 0, failure = null, failing_since = null, lease_owner = null, lease_until = null
      from (values ${sql.join(rows)}) as v(domain, checked, until)
      where r.domain = v.domain and r.lease_owner = ${owner}`.execute(db);
  }
}

/** A computation failed: the record stays, the domain is due again after the backoff. */
export async function recordFailed(
  db: Kysely<SafeSpfAndDomainSchema>,
  owner: string,
  domain: string,
  failure: string,
  failedAt: Date,
  retryInMs: number,
): Promise<void> {
  await db
    .updateTable("safe_spf_refresh")
    .set((eb) => ({
      failures: eb("failures", "+", 1),
      failure,
      failing_since: eb.fn.coalesce("failing_since", eb.val(failedAt)),
      next_due: new Date(failedAt.getTime() + retryInMs),
      lease_owner: null,
      lease_until: null,
    }))
    .where("domain", "=", domain)
    .where("lease_owner", "=", owner)
    .execute();
}

/** Nothing to do now (no outcome yet for a new original): look again later, keeping the rest. */
export async function recordPostponed(
  db: Kysely<SafeSpfAndDomainSchema>,
  owner: string,
  domain: string,
  retryInMs: number,
): Promise<void> {
  await db
    .updateTable("safe_spf_refresh")
    .set({ next_due: new Date(Date.now() + retryInMs), lease_owner: null, lease_until: null })
    .where("domain", "=", domain)
    .where("lease_owner", "=", owner)
    .execute();
}

/** Gives back what `owner` still holds (a clean stop): other refreshers need not wait out the lease. */
export async function releaseLeases(db: Kysely<SafeSpfAndDomainSchema>, owner: string): Promise<void> {
  await db
    .updateTable("safe_spf_refresh")
    .set({ lease_owner: null, lease_until: null })
    .where("lease_owner", "=", owner)
    .execute();
}

/** The soonest due time, to sleep until it (bounded by the refresher's tick). */
export async function nextDue(db: Kysely<SafeSpfAndDomainSchema>): Promise<Date | null> {
  // A due domain another refresher holds is due for us only when its lease runs out.
  const row = await sql<{ due: Date | string | null }>`
    select min(greatest(next_due, coalesce(lease_until, next_due))) as due from safe_spf_refresh`.execute(db);
  const due = row.rows[0]?.due;
  return due ? new Date(due) : null;
}
