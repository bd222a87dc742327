import type { AnySchema } from "@dmarc-ledger/db";
import { type Kysely, sql, type Transaction } from "kysely";

/**
 * Leases in `projection_lease`: a named piece of work (a projection, a background job) owned by
 * one process at a time, until its lease runs out unrenewed. The clock is the database's, so
 * hosts whose clocks differ agree on who holds what.
 */

/** A lease held: its token grows at every change of owner and fences the owner's writes. */
export interface HeldLease {
  name: string;
  owner: string;
  token: bigint;
}

/** Thrown inside a fenced transaction whose lease another process holds now. */
export class LeaseLostError extends Error {
  constructor(readonly lease: string) {
    super(`the lease ${lease} is no longer this process's`);
    this.name = "LeaseLostError";
  }
}

/**
 * Takes the lease when it is free, has run out, or is already this owner's (a restart under the
 * same owner id). Returns it, or null while another owner holds it.
 */
export async function tryAcquireLease(
  db: Kysely<AnySchema>,
  name: string,
  owner: string,
  ttlMs: number,
): Promise<HeldLease | null> {
  const { rows } = await sql<{ token: string }>`
    insert into projection_lease (name, owner, token, expires_at)
    values (${name}, ${owner}, 1, clock_timestamp() + ${ttlMs} * interval '1 millisecond')
    on conflict (name) do update
      set owner = excluded.owner,
          token = projection_lease.token + 1,
          expires_at = excluded.expires_at
      where projection_lease.expires_at < clock_timestamp() or projection_lease.owner = excluded.owner
    returning token::text`.execute(db);
  const row = rows[0];
  return row ? { name, owner, token: BigInt(row.token) } : null;
}

/** Extends the lease; false when it is no longer held with this token (it was taken over). */
export async function renewLease(db: Kysely<AnySchema>, lease: HeldLease, ttlMs: number): Promise<boolean> {
  const { rows } = await sql<{ name: string }>`
    update projection_lease set expires_at = clock_timestamp() + ${ttlMs} * interval '1 millisecond'
    where name = ${lease.name} and owner = ${lease.owner} and token = ${lease.token.toString()}
      and expires_at > clock_timestamp()
    returning name`.execute(db);
  return rows.length === 1;
}

/** Gives the lease back at once (a clean stop), so that another process need not wait it out. */
export async function releaseLease(db: Kysely<AnySchema>, lease: HeldLease): Promise<void> {
  await sql`
    update projection_lease set expires_at = clock_timestamp() - interval '1 millisecond'
    where name = ${lease.name} and owner = ${lease.owner} and token = ${lease.token.toString()}`.execute(db);
}

/**
 * The fence of a transaction that writes under leases: locks their rows (a takeover waits until
 * the transaction ends) after checking each is still held with its token and has not run out,
 * and extends them, since no one can take them while the transaction holds them. Throws
 * LeaseLostError, which rolls the transaction back, for the first one that is not.
 */
export async function fenceLeases(
  trx: Transaction<AnySchema>,
  leases: readonly HeldLease[],
  ttlMs: number,
): Promise<void> {
  for (const lease of leases) {
    if (!(await renewLease(trx, lease, ttlMs))) throw new LeaseLostError(lease.name);
  }
}

/**
 * Extends leases this transaction fenced, at its end: a batch that ran longer than the lease
 * commits with it still held, so that a process waiting to take it over does not win it the
 * moment the batch commits.
 */
export async function extendFencedLeases(
  trx: Transaction<AnySchema>,
  leases: readonly HeldLease[],
  ttlMs: number,
): Promise<void> {
  for (const lease of leases) {
    await sql`
      update projection_lease set expires_at = clock_timestamp() + ${ttlMs} * interval '1 millisecond'
      where name = ${lease.name} and owner = ${lease.owner} and token = ${lease.token.toString()}`.execute(
      trx,
    );
  }
}

/** How many leases named `prefix…` are held now: the live members of a group. */
export async function liveLeases(db: Kysely<AnySchema>, prefix: string): Promise<number> {
  const { rows } = await sql<{ live: number }>`
    select count(*)::int as live from projection_lease
    where starts_with(name, ${prefix}) and expires_at > clock_timestamp()`.execute(db);
  return rows[0]?.live ?? 0;
}

/**
 * Forgets leases named `prefix…` that ran out more than `ageMs` ago: each projector process's
 * member lease has a name of its own, so that every start would otherwise leave a row behind.
 */
export async function forgetExpiredLeases(
  db: Kysely<AnySchema>,
  prefix: string,
  ageMs: number,
): Promise<void> {
  await sql`delete from projection_lease where starts_with(name, ${prefix})
    and expires_at < clock_timestamp() - ${ageMs} * interval '1 millisecond'`.execute(db);
}
