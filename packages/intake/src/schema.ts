import type { ColumnType, Generated } from "kysely";

export type ArchiveStatus = "received" | "stored" | "duplicate" | "rejected";

export interface RawInputTable {
  sha256: string;
  /** int8: pg returns a string, PGlite a number; read through Number(). */
  size: ColumnType<string | number, number, number>;
  compression: "gzip" | null;
  content: Uint8Array | null;
  channel: string;
  source: string;
  status: ArchiveStatus;
  code: string | null;
  reason: string | null;
  items: Generated<string>;
  /** int8, read through Number(); 0 until an outcome says otherwise. */
  rows_dropped: ColumnType<string | number, number | undefined, number>;
  /** JSON text: the rows dropped by reason, `[{"reason","rows","first"}]`. */
  dropped: Generated<string>;
  times_received: Generated<number>;
  first_seen: ColumnType<Date, Date | undefined, Date>;
  last_seen: ColumnType<Date, Date | undefined, Date>;
  processed_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface RawInputReceiptTable {
  id: Generated<string>;
  sha256: string;
  channel: string;
  source: string;
  /** The tenant that sent it through the API; null for the mail channels and imports. */
  tenant_id: string | null;
  received_at: ColumnType<Date, Date | undefined, never>;
}

/** The domains an input's reports name (lower-case): a tenant lists the inputs of its domains. */
export interface RawInputDomainTable {
  domain: string;
  sha256: string;
}

export interface IntakeSchema {
  raw_input: RawInputTable;
  raw_input_receipt: RawInputReceiptTable;
  raw_input_domain: RawInputDomainTable;
}
