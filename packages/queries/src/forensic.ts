import type { ForensicPersonalFields, Personal } from "@dmarc-ledger/events";
import type { DataKeys } from "@dmarc-ledger/personal-data";
import { cutHeaders, inDomains, tenantReportDomains } from "@dmarc-ledger/report-read-models";
import { type Kysely, sql } from "kysely";
import { authResultsOf } from "./forensic-auth-results.js";
import { redactHeaders, removed } from "./forensic-redaction.js";
import { offsetOf, type PageQuery } from "./page.js";
import type { QuerySchema } from "./schema.js";

export interface ForensicRecord {
  ForensicId: string;
  Subject: string;
  Domain: string;
  Received: string;
  Amount: string;
  Headers: string;
}

interface ForensicRow {
  forensic_id: string;
  domain: string;
  received: string;
  amount: string;
  personal: string;
}

export interface ForensicOptions {
  /** Opens sealed fields; without, every sealed field reads as removed. */
  keys?: DataKeys | undefined;
  /** Addresses masked, subject removed (the tenant's setting; on by default). */
  redact: boolean;
}

/**
 * GET forensic: the failure reports that arrived in the period, newest first. Their personal
 * fields are opened here, page by page: a report whose data key was shredded stays listed and
 * counted, its Subject and Headers `(removed)`.
 */
export async function forensicReports(
  db: Kysely<QuerySchema>,
  query: PageQuery,
  options: ForensicOptions = { redact: true },
): Promise<{ total: number; records: ForensicRecord[] }> {
  const domains = await tenantReportDomains(db, query.tenantId, query.domain);
  const inPeriod = sql`f.received >= ${query.start} and f.received <= ${query.end}
    and ${inDomains(domains, "f.domain")}`;
  // The page and the count in one statement, so both see the same reports while the projector
  // adds more; not a window count, which would format every report of the period.
  const { rows } = await sql<ForensicRow & { total: string }>`
    with counted as (select count(*)::text as total from forensic_report f where ${inPeriod}),
    page as (
      select f.forensic_id, f.received as received_at, f.domain, f.amount, f.personal
      from forensic_report f where ${inPeriod}
      order by f.received desc, f.forensic_id desc
      limit ${query.perPage} offset ${offsetOf(query)})
    select counted.total, page.forensic_id::text as forensic_id, page.domain,
      to_char(to_timestamp(page.received_at) at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS') as received,
      page.amount::text as amount, page.personal
    from counted left join page on true
    order by page.received_at desc, page.forensic_id desc`.execute(db);
  const total = Number(rows[0]?.total ?? 0);
  const onPage = rows.filter((row) => row.forensic_id !== null);
  const envelopes = onPage.map((row) => JSON.parse(row.personal) as Personal<ForensicPersonalFields>);
  const opened = options.keys
    ? await options.keys.open(db, envelopes)
    : envelopes.map((envelope) => ("clear" in envelope ? envelope.clear : null));
  return {
    total,
    records: onPage.map((row, index) => forensicRecord(row, opened[index] ?? null, options.redact)),
  };
}

function forensicRecord(
  row: ForensicRow,
  fields: ForensicPersonalFields | null,
  redact: boolean,
): ForensicRecord {
  const shown = shownForensicFields(fields, redact);
  return {
    ForensicId: row.forensic_id,
    Subject: shown.subject,
    Domain: row.domain,
    Received: row.received,
    Amount: row.amount,
    Headers: shown.headers,
  };
}

/**
 * One failure report with what it says of the message beside the spec's fields (GET
 * failure_report; null where the report does not say): its feedback type, the address that sent
 * the message, the authentication that failed, what the receiver did with it, and the SPF and
 * DKIM results the receiver wrote into its `Authentication-Results` header.
 */
export interface ForensicDetail extends ForensicRecord {
  FeedbackType: string | null;
  SourceIp: string | null;
  AuthFailure: string | null;
  DeliveryResult: string | null;
  SpfResult: string | null;
  DkimResult: string | null;
}

/** A failure report of the tenant's domains by its ForensicId; null when it has none of that id. */
export async function forensicReport(
  db: Kysely<QuerySchema>,
  tenantId: string,
  forensicId: string,
  options: ForensicOptions = { redact: true },
): Promise<ForensicDetail | null> {
  const domains = await tenantReportDomains(db, tenantId, undefined);
  const { rows } = await sql<
    ForensicRow & {
      feedback_type: string | null;
      auth_failure: string | null;
      delivery_result: string | null;
    }
  >`
    select f.forensic_id::text as forensic_id, f.domain,
      to_char(to_timestamp(f.received) at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS') as received,
      f.amount::text as amount, f.personal, f.feedback_type, f.auth_failure, f.delivery_result
    from forensic_report f
    where f.forensic_id = ${forensicId} and ${inDomains(domains, "f.domain")}`.execute(db);
  const row = rows[0];
  if (!row) return null;
  const envelope = JSON.parse(row.personal) as Personal<ForensicPersonalFields>;
  const [fields] = options.keys
    ? await options.keys.open(db, [envelope])
    : ["clear" in envelope ? envelope.clear : null];
  const headers = fields ? cutHeaders(fields.headers) : null;
  const results = headers === null ? { spf: null, dkim: null } : authResultsOf(headers);
  return {
    ...forensicRecord(row, fields ?? null, options.redact),
    FeedbackType: row.feedback_type,
    SourceIp: fields?.sourceIp ?? null,
    AuthFailure: row.auth_failure,
    DeliveryResult: row.delivery_result,
    SpfResult: results.spf,
    DkimResult: results.dkim,
  };
}

/**
 * What /forensic (and the events feed) shows of a failure report's personal fields: opened
 * (null: its key was shredded, by retention or erasure), then redacted by the tenant's policy.
 */
export function shownForensicFields(
  fields: ForensicPersonalFields | null,
  redact: boolean,
): { subject: string; headers: string } {
  const headers = fields ? cutHeaders(fields.headers) : null;
  return {
    subject: fields && !redact ? fields.subject : removed,
    headers: headers === null ? removed : redact ? redactHeaders(headers) : headers,
  };
}
