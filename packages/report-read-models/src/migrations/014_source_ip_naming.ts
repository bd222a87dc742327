import { type Kysely, sql } from "kysely";

export const sourceIpNaming = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    // What names a source beside its reverse DNS (SourceIpResolved v2): null where an answer
    // named nothing, or came before v2.
    await sql`alter table source_ip_name add column service_name text,
      add column service_type text,
      add column asn bigint,
      add column asn_organization text,
      add column country text,
      add column naming_sources text`.execute(db);
  },
};
