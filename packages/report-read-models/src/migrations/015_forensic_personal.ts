import { type Kysely, sql } from "kysely";

/**
 * The personal fields of a failure report leave their clear columns for `personal`, the event's
 * envelope as it is (sealed, or clear for events written before encryption): shredding a data
 * key then makes the row unreadable too, without touching it (docs/privacy.md). `tenant_id` is
 * the tenant whose key sealed it and `recorded` when it was stored (Unix seconds; the arrival
 * date the report gives is the message's, not ours), so that retention and erasure drop that
 * tenant's rows.
 */
export const forensicPersonal = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await db.schema.alterTable("forensic_report").addColumn("personal", "text").execute();
    await db.schema.alterTable("forensic_report").addColumn("tenant_id", "text").execute();
    await db.schema.alterTable("forensic_report").addColumn("recorded", "bigint").execute();
    await sql`update forensic_report set recorded = received`.execute(db);
    await sql`alter table forensic_report alter column recorded set not null`.execute(db);
    await sql`update forensic_report set personal = json_build_object('clear',
      json_build_object('subject', subject, 'headers', headers, 'sourceIp', null,
        'originalMailFrom', null, 'originalRcptTo', null))::text`.execute(db);
    await sql`alter table forensic_report alter column personal set not null`.execute(db);
    await db.schema.alterTable("forensic_report").dropColumn("subject").execute();
    await db.schema.alterTable("forensic_report").dropColumn("headers").execute();
  },
};
