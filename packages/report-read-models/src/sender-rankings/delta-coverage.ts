import { type Kysely, sql, type Transaction } from "kysely";
import type { ReportSchema } from "../schema.js";
import type { SenderFactDelta } from "./fact-deltas.js";

const DAY = 86_400;

/**
 * The advisory lock a sender ranking build holds, shared, for its whole length: the fact batches
 * see it in pg_locks ("a build is under way") and write every delta meanwhile. The sender upkeep's
 * own lock is (1380011595, 1). A session lock, so it goes with the connection if the process dies.
 */
const buildUnderWay = { classid: 1380011595, objid: 2 };

/**
 * Runs a sender ranking's build (`work`, on one connection) announced to the fact batches:
 * aggregate_by_sender writes the deltas of a (domain, day) only when a ranking may need them
 * (deltasRankingsNeed), and a ranking built now needs those of every batch that commits after
 * its snapshot. A batch that looked before the announcement holds the change counter's row (from
 * its number to its commit): the build waits for that row before it starts its snapshot, so such
 * a batch is in the snapshot, and every later batch sees the announcement.
 */
export async function asAnnouncedSenderBuild<Db, T>(
  db: Kysely<Db>,
  work: (connection: Kysely<Db>) => Promise<T>,
): Promise<T> {
  return db.connection().execute(async (connection) => {
    await sql`select pg_advisory_lock_shared(${buildUnderWay.classid}::int4, ${buildUnderWay.objid}::int4)`.execute(
      connection,
    );
    try {
      await connection
        .transaction()
        .execute((trx) => sql`select 1 from agg_sender_change_counter for update`.execute(trx));
      return await work(connection);
    } finally {
      await sql`select pg_advisory_unlock_shared(${buildUnderWay.classid}::int4, ${buildUnderWay.objid}::int4)`.execute(
        connection,
      );
    }
  });
}

/**
 * The deltas of a fact batch that a sender ranking may need: those of the (report domain, UTC
 * day)s a ranking built before covers (its report domains and bucket days, as
 * pruneSenderFactDeltas keeps them), or all of them while a build is under way. Called after the
 * batch took its number (recordSenderFactChanges), whose row it holds until it commits (see
 * asAnnouncedSenderBuild). A deployment without rankings (a first import, a small tenant: the
 * queries group) writes none: on an import of 10,000 reports of 20 rows they were 200,000 rows
 * and 0.86 s of its 9.3 s.
 */
export async function deltasRankingsNeed(
  trx: Transaction<ReportSchema>,
  deltas: readonly SenderFactDelta[],
): Promise<SenderFactDelta[]> {
  if (deltas.length === 0) return [];
  const { rows: building } = await sql<{ under_way: boolean }>`select exists (select 1 from pg_locks
      where locktype = 'advisory' and classid = ${buildUnderWay.classid}::oid and objid = ${buildUnderWay.objid}::oid
        and objsubid = 2 and database = (select oid from pg_database where datname = current_database())
    ) as under_way`.execute(trx);
  if (building[0]?.under_way) return [...deltas];
  const days = new Map<string, { domain: string; day: number }>();
  for (const delta of deltas) {
    const day = Math.floor(delta.t / DAY);
    days.set(`${delta.domain}\u0000${day}`, { domain: delta.domain, day });
  }
  const list = [...days.values()];
  const { rows } = await sql<{ domain: string; day: number }>`select distinct u.domain, u.day
    from unnest(${list.map((d) => d.domain)}::text[], ${list.map((d) => d.day)}::integer[]) as u(domain, day)
    join (
      select split_part(pair, ' ', 1) as domain, b.bucket_start / ${DAY} as first_day, b.bucket_end / ${DAY} as last_day
      from sender_ranking_build b cross join unnest(b.report_domains) as pair
    ) c on c.domain = u.domain and u.day between c.first_day and c.last_day`.execute(trx);
  if (rows.length === 0) return [];
  const needed = new Set(rows.map((row) => `${row.domain}\u0000${Number(row.day)}`));
  return deltas.filter((delta) => needed.has(`${delta.domain}\u0000${Math.floor(delta.t / DAY)}`));
}
