import { type Kysely, sql } from "kysely";

/**
 * What named each source's service (SourceIpResolved v3): `named_by` (rdns, auth_domain, asn),
 * the authentication domain that named it, and the special-purpose range (private,
 * carrierGradeNat, loopback, linkLocal, reserved…) an address is in. Null on rows named before.
 */
export const sourceIpNamedBy = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await sql`alter table source_ip_name add column named_by text,
      add column auth_domain text,
      add column address_range text`.execute(db);
  },
};
