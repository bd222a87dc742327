import { type Kysely, sql } from "kysely";

// biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
type AnyDb = Kysely<any>;

/**
 * People's addresses leave the tables (docs/privacy.md, "People"): an account keeps the envelope
 * its UserCreated holds (`{"clear":…}` for the accounts made so far, whose events hold the address
 * in clear too) and its stream, which sign-in finds it by; a set-password link keeps the stream.
 * The accounts made so far are on `user-<sha256 of the address>`, as their events are. The
 * throttle's per-account counts were keyed by a plain SHA-256 of the address: dropped (they last
 * 15 minutes).
 */
export const sealedAddressesMigration = {
  up: async (db: AnyDb) => {
    await sql`alter table user_account add column stream text`.execute(db);
    await sql`update user_account set stream = 'user-' || encode(sha256(convert_to(email, 'UTF8')), 'hex')`.execute(
      db,
    );
    await sql`alter table user_account alter column stream set not null`.execute(db);
    await sql`alter table user_account add constraint user_account_stream_key unique (stream)`.execute(db);
    await sql`alter table user_account add column sealed_email text`.execute(db);
    await sql`update user_account set sealed_email = json_build_object('clear', email)::text`.execute(db);
    await sql`alter table user_account alter column sealed_email set not null`.execute(db);
    await sql`alter table user_account drop column email`.execute(db);

    await sql`alter table user_password_link add column stream text`.execute(db);
    await sql`update user_password_link set stream = 'user-' || encode(sha256(convert_to(email, 'UTF8')), 'hex')`.execute(
      db,
    );
    await sql`alter table user_password_link alter column stream set not null`.execute(db);
    await sql`alter table user_password_link drop column email`.execute(db);

    await sql`delete from sign_in_throttle where key like 'account:%'`.execute(db);
  },
};
