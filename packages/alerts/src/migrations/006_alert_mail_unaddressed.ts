import { type Kysely, sql } from "kysely";

/**
 * The mail outboxes keep no address: a mail names its person (user_id) and the mail worker opens
 * their sealed address (user_account) when it sends. The tables are copied without the column and
 * the old ones dropped, rather than the column dropped: a dropped column's values stay in the
 * table's files until every row is rewritten, and dropping the table unlinks them.
 */
export const alertMailUnaddressed = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await sql`create table alert_email_unaddressed (
      email_id text primary key,
      alert_id text not null,
      tenant_id text not null,
      user_id text not null,
      status text not null,
      attempts integer not null,
      next_attempt_at timestamptz not null,
      last_error text,
      lease_until timestamptz,
      sent_at timestamptz)`.execute(db);
    await sql`insert into alert_email_unaddressed
      select email_id, alert_id, tenant_id, user_id, status, attempts, next_attempt_at, last_error,
        lease_until, sent_at
      from alert_email`.execute(db);
    await sql`drop table alert_email`.execute(db);
    await sql`alter table alert_email_unaddressed rename to alert_email`.execute(db);
    await sql`alter index alert_email_unaddressed_pkey rename to alert_email_pkey`.execute(db);
    await sql`create index alert_email_due on alert_email (next_attempt_at) where status = 'pending'`.execute(
      db,
    );

    await sql`create table alert_digest_unaddressed (
      digest_id text primary key,
      tenant_id text not null,
      user_id text not null,
      period_start timestamptz not null,
      period_end timestamptz not null,
      subject text not null,
      text text not null,
      html text not null,
      status text not null,
      attempts integer not null,
      next_attempt_at timestamptz not null,
      last_error text,
      lease_until timestamptz,
      sent_at timestamptz)`.execute(db);
    await sql`insert into alert_digest_unaddressed
      select digest_id, tenant_id, user_id, period_start, period_end, subject, text, html, status,
        attempts, next_attempt_at, last_error, lease_until, sent_at
      from alert_digest`.execute(db);
    await sql`drop table alert_digest`.execute(db);
    await sql`alter table alert_digest_unaddressed rename to alert_digest`.execute(db);
    await sql`alter index alert_digest_unaddressed_pkey rename to alert_digest_pkey`.execute(db);
  },
};
