import type { ColumnType } from "kysely";

type Timestamp = ColumnType<Date, Date | string, Date | string>;

/** The tenancy's tables, projected from the tenant and domain streams (projections/). */
export interface TenantTable {
  tenant_id: string;
  name: string;
  region: string;
  created_at: Timestamp;
}

export interface ApiKeyTable {
  key_id: string;
  tenant_id: string;
  key_hash: string;
  key_prefix: string;
  /** Comma-separated scope names: read,write,ingest. */
  scopes: string;
  region: string;
  revoked: boolean;
}

export interface DomainTable {
  domain: string;
  tenant_id: string;
  group_name: string | null;
  added_at: Timestamp;
}

/**
 * Per tenant, a token replaced with every change to its rows of `domain` (migration 007): the same
 * token means the same domains and groups.
 */
export interface DomainSetTokenTable {
  tenant_id: string;
  token: string;
}

/**
 * The claims in force in the domain trees (DomainReserved not yet DomainReleased): which tenant
 * holds each claimed domain. A tenant's domain without its claim was added before the tree rule.
 */
export interface DomainClaimTable {
  domain: string;
  tenant_id: string;
}

/**
 * The senders a domain's owner approved or not (SenderApprovalSet; a cleared decision has no
 * row): kind "service" (a sender as aggregate_by_sender names it) or "range" (a CIDR).
 */
export interface SenderApprovalTable {
  domain: string;
  tenant_id: string;
  kind: "service" | "range";
  sender: string;
  approved: boolean;
  /** How many addresses the service grouped when decided; null when not recorded (a range, v1). */
  members_count: number | null;
}

/** The addresses a decided service grouped when decided (the first approvalMembersLimit). */
export interface SenderApprovalMemberTable {
  domain: string;
  service: string;
  source_ip: string;
}

/** Every event of every domain stream: the audit trail behind GET history. */
export interface AuditEventTable {
  domain: string;
  revision: ColumnType<string | number, number | bigint | string, number | bigint | string>;
  event_type: string;
  recorded_at: Timestamp;
  caused_by: string;
  correlation_id: string | null;
  /** The event's payload as JSON text. */
  data: string;
}

export interface TenancySchema {
  tenant: TenantTable;
  api_key: ApiKeyTable;
  domain: DomainTable;
  domain_set_token: DomainSetTokenTable;
  domain_claim: DomainClaimTable;
  audit_event: AuditEventTable;
  sender_approval: SenderApprovalTable;
  sender_approval_member: SenderApprovalMemberTable;
}
