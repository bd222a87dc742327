import type { MigrationSet } from "@dmarc-ledger/db";
import { safeSpf } from "./001_safe_spf.js";
import { safeSpfMinTtl } from "./002_safe_spf_min_ttl.js";
import { safeSpfRefresh } from "./003_safe_spf_refresh.js";

/**
 * Safe SPF's tables (schema.ts). Until the read models were split (issue 22) the read-model set
 * (`read_models`) made them; a database it migrated carries its migrations over.
 */
export const safeSpfMigrations: MigrationSet = {
  name: "safe_spf",
  migrations: {
    "001_safe_spf": safeSpf,
    "002_safe_spf_min_ttl": safeSpfMinTtl,
    "003_safe_spf_refresh": safeSpfRefresh,
  },
  formerly: {
    set: "read_models",
    migrations: {
      "001_safe_spf": "003_audit_and_safe_spf",
      "002_safe_spf_min_ttl": "009_safe_spf_refresh",
      "003_safe_spf_refresh": "009_safe_spf_refresh",
    },
  },
};
