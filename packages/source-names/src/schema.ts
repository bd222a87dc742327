import type { ReportSchema } from "@dmarc-ledger/report-read-models";

/**
 * The answers the resolver reads back: source_ip_name, which the report read models project from
 * its SourceIpResolved events (and the by-source records show).
 */
export type SourceIpNameSchema = Pick<ReportSchema, "source_ip_name">;
