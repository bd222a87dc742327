import { type Kysely, sql } from "kysely";

export const sourceIpAnswers = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    // The last answer for each source IP, beside the domain the by-source records show:
    // the resolver reads which IPs are due again from here.
    await sql`alter table source_ip_name add column ptr_name text,
      add column confirmed boolean not null default false,
      add column outcome text not null default 'found',
      add column resolved_at timestamptz not null default now(),
      add column answered_at timestamptz`.execute(db);
    await sql`create index source_ip_name_by_resolved_at on source_ip_name (resolved_at)`.execute(db);
  },
};
