import type { MigrationSet } from "@dmarc-ledger/db";
import { tenant } from "./001_tenant.js";
import { apiKey } from "./002_api_key.js";
import { domain } from "./003_domain.js";
import { auditEvent } from "./004_audit_event.js";
import { domainClaim } from "./005_domain_claim.js";
import { senderApproval } from "./006_sender_approval.js";
import { domainSetToken } from "./007_domain_set_token.js";
import { senderApprovalMember } from "./008_sender_approval_member.js";

/**
 * The tenancy's tables (schema.ts). Until the read models were split (issue 22) the read-model
 * set (`read_models`) made them; a database it migrated carries its migrations over.
 */
export const tenancyMigrations: MigrationSet = {
  name: "tenancy",
  migrations: {
    "001_tenant": tenant,
    "002_api_key": apiKey,
    "003_domain": domain,
    "004_audit_event": auditEvent,
    "005_domain_claim": domainClaim,
    "006_sender_approval": senderApproval,
    "007_domain_set_token": domainSetToken,
    "008_sender_approval_member": senderApprovalMember,
  },
  formerly: {
    set: "read_models",
    migrations: {
      "001_tenant": "001_skeleton",
      "002_api_key": "001_skeleton",
      "003_domain": "001_skeleton",
      "004_audit_event": "003_audit_and_safe_spf",
      "005_domain_claim": "011_domain_claim",
    },
  },
};
