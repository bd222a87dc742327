import type { ColumnType } from "kysely";

/**
 * One data key: AES-256, for the personal data of one tenant (`-`: data no tenant owns) received
 * in one UTC month. Kept apart from the events: deleting the row is what makes the fields sealed
 * under it unreadable for good (crypto-shredding).
 */
export interface DataKeyTable {
  key_id: string;
  tenant_id: string;
  /** `YYYY-MM`, UTC. */
  month: string;
  /** The key wrapped by the master key: 12-byte nonce, ciphertext, 16-byte tag (AES-256-GCM). */
  wrapped: Uint8Array;
  /** Which master key wrapped it (masterKeyId): a wrong MASTER_KEY is refused at start. */
  master_key_id: string;
  created_at: ColumnType<Date, Date | undefined, never>;
}

/** A tenant's PersonalDataPolicySet, the latest; a tenant without a row has the defaults. */
export interface PersonalDataPolicyTable {
  tenant_id: string;
  failure_report_days: number;
  raw_input_days: number;
  aggregate_days: number | null;
  redaction: boolean;
}

/**
 * The lease of the retention job: one run at a time in a deployment, whichever process holds it
 * (two projectors may run); a holder that died lets it run out.
 */
export interface RetentionLeaseTable {
  name: string;
  holder: string | null;
  leased_until: Date;
  last_run: Date | null;
}

export interface PersonalDataSchema {
  data_key: DataKeyTable;
  retention_lease: RetentionLeaseTable;
  personal_data_policy: PersonalDataPolicyTable;
}
