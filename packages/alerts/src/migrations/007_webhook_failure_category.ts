import { type Kysely, sql } from "kysely";

/**
 * The delivery log says why an attempt failed as a category (webhook-sender.ts, FailureCategory):
 * the text kept before (a receiver's answer, an address a name resolved to) is replaced by its
 * category.
 */
export const webhookFailureCategory = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await sql`update webhook_delivery set last_error = case
        when last_error like 'HTTP %' and last_status is not null then 'http_status ' || last_status
        when last_error like 'no complete answer within %' then 'timeout'
        when last_error like '%not a public address%' then 'not_public'
        when last_error like '%ECONNREFUSED%' then 'refused'
        when last_error like '%ENOTFOUND%' or last_error like '%EAI_AGAIN%' then 'dns'
        else 'connection' end
      where last_error is not null`.execute(db);
  },
};
