import { type Kysely, sql } from "kysely";

/** Appends are serialised now (global-order.ts): a stream's last writer no longer needs checking. */
export const streamsWithoutWriter = {
  async up(db: Kysely<unknown>) {
    await sql`alter table streams drop column transaction_id`.execute(db);
  },
};
