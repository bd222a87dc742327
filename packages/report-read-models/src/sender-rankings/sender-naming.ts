import { type RawBuilder, sql } from "kysely";

/**
 * The failing messages a stricter policy would newly stop, by disposition: under p=quarantine the
 * ones delivered (none); under p=reject also the ones quarantined, which reject would refuse.
 * Messages already rejected are stopped today, whatever the policy.
 */
export const dispositionsStoppedBy = {
  quarantine: ["none"],
  reject: ["none", "quarantine"],
} as const satisfies Record<string, readonly string[]>;

export type StricterPolicy = keyof typeof dispositionsStoppedBy;

/** What kind of name a sender has: a known service, or for an unknown source what is known of it. */
export type SenderKind = "service" | "base_domain" | "asn" | "unknown";

/**
 * The sender an address (its naming row aliased `n`, or none) sends as, as `kind` and `sender`:
 * its service, however named; else the base domain of its forward-confirmed name; else its AS's
 * organisation, never a bare AS number; else "unknown". It reads `service_name`, `source_domain`
 * and `asn_organization` only: the one rule for the API's senders (source_ip_name) and the
 * alerts' (alert_source_name).
 */
export const senderColumns = (n = "n"): RawBuilder<unknown> => {
  const c = (column: string) => sql.ref(`${n}.${column}`);
  return sql`case when ${c("service_name")} is not null then 'service'
      when coalesce(${c("source_domain")}, '') <> '' then 'base_domain'
      when coalesce(${c("asn_organization")}, '') <> '' then 'asn' else 'unknown' end as kind,
    ${senderOf(n)} as sender`;
};

/** The `sender` of senderColumns alone, as an expression (a filter by sender compares it). */
export const senderOf = (n = "n"): RawBuilder<string> => {
  const c = (column: string) => sql.ref(`${n}.${column}`);
  return sql<string>`coalesce(${c("service_name")}, nullif(${c("source_domain")}, ''),
    nullif(${c("asn_organization")}, ''), 'unknown')`;
};

/**
 * The columns that say who an address (its source_ip_name row aliased `n`, or none) sends as:
 * `kind` and `sender` (senderColumns), `named_by` (what named the sender: rdns, auth_domain or
 * asn; "" for an unknown one), and the details a sender record picks from. One definition for
 * the queries and the sender rankings.
 */
export const senderNameColumns = (n = "n"): RawBuilder<unknown> => {
  const c = (column: string) => sql.ref(`${n}.${column}`);
  return sql`${senderColumns(n)},
    case when ${c("service_name")} is not null then coalesce(${c("named_by")}, 'rdns')
      when coalesce(${c("source_domain")}, '') <> '' then 'rdns'
      when coalesce(${c("asn_organization")}, '') <> '' then 'asn' else '' end as named_by,
    coalesce(${c("service_type")}, '') as service_type, coalesce(${c("asn")}::text, '') as asn,
    coalesce(${c("asn_organization")}, '') as asn_organization, coalesce(${c("country")}, '') as country`;
};
