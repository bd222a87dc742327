import { type Kysely, sql } from "kysely";

/**
 * The alerts' copy of what names a source IP takes the read model's column names and the AS's
 * organisation, so that one rule (report-read-models' senderColumns) names its sender for the
 * API and for the alerts: an AS with no service is its organisation ("Google LLC"), not "AS15169".
 * The organisation of the rows named before is taken from source_ip_name where it holds the same
 * AS (the same database); a row it does not cover is named again by the next answer for it.
 */
export const alertSourceNameAsApi = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await sql`alter table alert_source_name rename column service to service_name`.execute(db);
    await sql`alter table alert_source_name rename column base_domain to source_domain`.execute(db);
    await sql`alter table alert_source_name add column asn_organization text`.execute(db);
    const { rows } = await sql<{
      found: boolean;
    }>`select to_regclass('source_ip_name') is not null as found`.execute(db);
    if (rows[0]?.found) {
      await sql`update alert_source_name a set asn_organization = n.asn_organization
        from source_ip_name n where n.source_ip = a.source_ip and n.asn = a.asn`.execute(db);
    }
  },
};
