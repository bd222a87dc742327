import { integer } from "@dmarc-ledger/config";

/** The by-source rankings' upkeep (see docs/architecture.md). */
export const projectorSettings = {
  RANKING_INTERVAL_MS: integer({ min: 1, max: 86_400_000, default: 60_000 }),
  RANKING_MIN_FACTS: integer({ min: 1, max: 1_000_000_000, default: 20_000 }),
  /** Each of the upkeep's statements may run this long (0: no limit); a first build is the longest. */
  RANKING_STATEMENT_TIMEOUT_MS: integer({ min: 0, max: 86_400_000, default: 300_000 }),
  /** Retention of personal data runs once per this in the deployment (docs/privacy.md). */
  RETENTION_INTERVAL_MS: integer({ min: 1000, max: 604_800_000, default: 3_600_000 }),
};

export interface ProjectorSettings {
  RANKING_INTERVAL_MS: number;
  RANKING_MIN_FACTS: number;
  RANKING_STATEMENT_TIMEOUT_MS: number;
  RETENTION_INTERVAL_MS: number;
}
