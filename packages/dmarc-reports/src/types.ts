import type { TlsReport } from "@dmarc-ledger/tls-reports";

export interface ParseOptions {
  /** Ceiling on the bytes any decompression layer (or a buffered mail) may produce. Default 200 MB. */
  maxDecompressedBytes?: number;
  /** Ceiling on decompressed/compressed bytes, checked once a layer has produced 1 MB. Default 250. */
  maxCompressionRatio?: number;
  /** Ceiling on a mail's size: mails are parsed whole. Default 32 MiB. */
  maxMailBytes?: number;
  /** Rows per "aggregate-rows" item. Default 1000. */
  rowBatch?: number;
}

export interface PolicyPublished {
  domain: string;
  adkim: string | null;
  aspf: string | null;
  p: string | null;
  sp: string | null;
  np: string | null;
  pct: number | null;
  fo: string | null;
  testing: string | null;
  discoveryMethod: string | null;
}

export interface AggregateHeader {
  schema: "rfc7489" | "rfc9990" | "draft";
  orgName: string;
  organization: string;
  email: string;
  reportId: string;
  begin: number;
  end: number;
  policy: PolicyPublished;
  identity: string;
}

export interface DkimAuthResult {
  domain: string;
  selector: string | null;
  result: string;
  humanResult: string | null;
}

export interface SpfAuthResult {
  domain: string;
  scope: string | null;
  result: string;
}

export interface PolicyOverrideReason {
  type: string;
  comment: string | null;
}

export interface AggregateRow {
  sourceIp: string;
  count: number;
  disposition: string;
  policyDkim: string;
  policySpf: string;
  reasons: PolicyOverrideReason[];
  arc: "pass" | "fail" | null;
  headerFrom: string;
  envelopeFrom: string | null;
  envelopeTo: string | null;
  dkim: DkimAuthResult[];
  spf: SpfAuthResult[];
}

/** Why a row of an aggregate report was left out; the rest of the report is stored. */
export type DroppedRowReason =
  | "missing_source_ip"
  | "invalid_source_ip"
  | "missing_count"
  | "invalid_count"
  | "unexpanded_entity";

/** The rows of a report left out for one reason: how many, and the first of them, said. */
export interface DroppedRows {
  reason: DroppedRowReason;
  rows: number;
  /** The first such row: `row 2: count "-5" is not a whole number`. */
  first: string;
}

export interface AggregateReport extends AggregateHeader {
  rows: AggregateRow[];
  warnings: string[];
  /** Rows left out, by reason (empty when none was). */
  dropped: DroppedRows[];
}

export interface FailureReport {
  feedbackType: string;
  reportedDomain: string;
  arrivalDate: string | null;
  subject: string;
  sourceIp: string | null;
  authFailure: string | null;
  deliveryResult: string | null;
  incidents: number;
  headers: string;
  originalMailFrom: string | null;
  originalRcptTo: string | null;
  identity: string;
  warnings: string[];
}

export type ReportItem =
  | { kind: "aggregate-begin"; header: AggregateHeader }
  | { kind: "aggregate-rows"; rows: AggregateRow[] }
  | { kind: "aggregate-end"; warnings: string[]; dropped: DroppedRows[] }
  | { kind: "failure"; report: FailureReport }
  | { kind: "tls"; report: TlsReport };

export type ParsedReport =
  | { kind: "aggregate"; report: AggregateReport }
  | { kind: "failure"; report: FailureReport }
  | { kind: "tls"; report: TlsReport };
