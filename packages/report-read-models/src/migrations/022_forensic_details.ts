import type { Kysely } from "kysely";

/**
 * What a failure report says beside its personal fields, for the dashboard's detail (issue 45):
 * its feedback type, the authentication that failed (`Auth-Failure`), and what became of the
 * message (`Delivery-Result`). Rows stored before hold none until `dmarc-ledger replay
 * --projection forensic_reports` rebuilds them from their events, which have them.
 */
export const forensicDetails = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await db.schema.alterTable("forensic_report").addColumn("feedback_type", "text").execute();
    await db.schema.alterTable("forensic_report").addColumn("auth_failure", "text").execute();
    await db.schema.alterTable("forensic_report").addColumn("delivery_result", "text").execute();
  },
};
