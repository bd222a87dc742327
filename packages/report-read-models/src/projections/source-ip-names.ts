import type { SourceIpResolved } from "@dmarc-ledger/events";
import type { Projection } from "@dmarc-ledger/projection-engine";
import { type RawBuilder, sql } from "kysely";
import { getDomain } from "tldts";
import type { ReportSchema } from "../schema.js";
import { takeNamingNumber } from "../sender-rankings/change-numbers.js";

/** The columns that name an address's sender and its details (the sender rankings hold them). */
const namingColumns = [
  "service_name",
  "source_domain",
  "asn",
  "service_type",
  "asn_organization",
  "country",
  "named_by",
];

/**
 * named_seq on an update: the batch's number when one of `columns` (those the update sets, of
 * namingColumns) changes, else as it was. The resolver answers every address again each week,
 * mostly with the same naming: only a real change makes a sender ranking stale.
 */
function namedSeqOnUpdate(columns: readonly string[], seq: string): RawBuilder<string> {
  const changed = columns.filter((column) => namingColumns.includes(column));
  if (changed.length === 0) return sql<string>`source_ip_name.named_seq`;
  const before = sql.join(changed.map((column) => sql.ref(`source_ip_name.${column}`)));
  const after = sql.join(changed.map((column) => sql.ref(`excluded.${column}`)));
  return sql<string>`case when (${before}) is distinct from (${after}) then ${seq}::bigint
    else source_ip_name.named_seq end`;
}

/**
 * What the by-source records show as `SourceDomain`: the registrable domain of the PTR name, only
 * when the name is forward-confirmed. Anyone can point the PTR of their own address at
 * mail.google.com; only the owner of google.com can make that name resolve back to it. An answer
 * that carries its naming (v2) says which: the public suffix list of the day it was named.
 */
export function sourceDomainOf(answer: Pick<SourceIpResolved, "name" | "confirmed" | "naming">): string {
  if (answer.naming) return answer.naming.baseDomain ?? "";
  if (!answer.confirmed || !answer.name) return "";
  return getDomain(answer.name) ?? "";
}

const isDefinitive = (outcome: SourceIpResolved["outcome"]) =>
  outcome !== "timeout" && outcome !== "error" && outcome !== "not_asked";

/** The columns of an address's row that name it (senderColumns reads the sender from them). */
export interface SourceNamingColumns {
  service_name: string | null;
  service_type: string | null;
  named_by: string | null;
  auth_domain: string | null;
  source_domain: string;
  asn: number | null;
  asn_organization: string | null;
  country: string | null;
  address_range: string | null;
  naming_sources: string | null;
}

/** The AS and country of the address: known whatever DNS answered. */
const networkOf = (naming: SourceIpResolved["naming"]) => ({
  asn: naming?.asn?.number ?? null,
  asn_organization: naming?.asn?.organization ?? null,
  country: naming?.country ?? null,
  naming_sources: naming ? JSON.stringify(naming.sources) : null,
  address_range: naming?.addressRange ?? null,
});

/** The service and what named it. */
const serviceOf = (naming: SourceIpResolved["naming"]) => ({
  service_name: naming?.service?.name ?? null,
  service_type: naming?.service?.type ?? null,
  named_by: naming?.namedBy ?? null,
  auth_domain: naming?.authDomain ?? null,
});

/**
 * A naming made without a DNS answer (v3: at first sight, or after a failed attempt, which names
 * by the last answer's name) names the service; a v2 failure named none and kept the last one.
 */
const namesWithoutDns = (answer: SourceIpResolved) =>
  answer.outcome === "not_asked" || (answer.naming?.namedBy ?? null) !== null;

/**
 * What one answer sets of an address's naming; the columns it leaves out stay as they were.
 * `definitive`: a DNS answer (not a timeout, an error or a naming before DNS), which sets them
 * all. Any other sets the AS and country (they need no DNS), and the service when it was named
 * without DNS; the last definitive answer's base domain stays. The source_ip_name projection and
 * the alerts' copy (alert_source_name) both keep an address's naming by it.
 */
export function sourceNamingSetBy(answer: SourceIpResolved): {
  definitive: boolean;
  columns: Partial<SourceNamingColumns>;
} {
  if (isDefinitive(answer.outcome)) {
    return {
      definitive: true,
      columns: {
        source_domain: sourceDomainOf(answer),
        ...serviceOf(answer.naming),
        ...networkOf(answer.naming),
      },
    };
  }
  return {
    definitive: false,
    columns: {
      ...(answer.naming ? networkOf(answer.naming) : {}),
      ...(namesWithoutDns(answer) ? serviceOf(answer.naming) : {}),
    },
  };
}

/**
 * The latest reverse-DNS answer per source IP, and its naming. A timeout or error moves only the
 * attempt's time and outcome (and the AS and country, which need no DNS): the last definitive
 * answer and its service stay shown until a new one replaces them.
 */
export const sourceIpNamesProjection: Projection<ReportSchema> = {
  name: "source_ip_names",
  // source_ip_name_change numbers the batches that renamed a sender (sender-rankings/).
  tables: ["source_ip_name", "source_ip_name_change"],
  handles: new Set(["SourceIpResolved"]),
  async apply(trx, events) {
    let seq: string | null = null;
    for (const event of events) {
      if (event.type !== "SourceIpResolved") continue;
      seq ??= await takeNamingNumber(trx);
      const answer = event.data;
      const { definitive, columns } = sourceNamingSetBy(answer);
      const attempt = { outcome: answer.outcome, resolved_at: answer.resolvedAt, ...columns };
      const row = definitive
        ? { ...attempt, ptr_name: answer.name, confirmed: answer.confirmed, answered_at: answer.resolvedAt }
        : attempt;
      await trx
        .insertInto("source_ip_name")
        .values({
          source_ip: answer.ip,
          source_domain: "",
          ptr_name: null,
          confirmed: false,
          answered_at: null,
          ...row,
          named_seq: seq,
        })
        .onConflict((oc) =>
          oc.column("source_ip").doUpdateSet({ ...row, named_seq: namedSeqOnUpdate(Object.keys(row), seq!) }),
        )
        .execute();
    }
  },
};
