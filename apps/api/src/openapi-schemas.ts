/**
 * JSON Schemas (2020-12, as OpenAPI 3.1 uses) of every response body, by endpoint name. The
 * OpenAPI document is built from them and a test validates real responses against them.
 */
import { ruleKinds } from "@dmarc-ledger/alerts";

type Schema = Record<string, unknown>;

const decimal: Schema = { type: "string", pattern: "^[0-9]+$" };
const nullableDecimal: Schema = { type: ["string", "null"], pattern: "^[0-9]+$" };

const counters: Record<string, Schema> = {
  Volume: decimal,
  DMARC: decimal,
  DMARCUnaligned: decimal,
  DMARCUnalignedARCPass: nullableDecimal,
  DKIMAligned: decimal,
  DKIM: decimal,
  DKIMFailed: decimal,
  SPFAligned: decimal,
  SPF: decimal,
  SPFFailed: decimal,
};

const record = (fields: Record<string, Schema>): Schema => ({
  type: "object",
  additionalProperties: false,
  required: Object.keys(fields),
  properties: fields,
});

const list = (item: Schema, total: Schema = { type: "integer", minimum: 0 }): Schema => ({
  type: "object",
  additionalProperties: false,
  required: ["status", "total", "records"],
  properties: { status: { const: "SUCCESS" }, total, records: { type: "array", items: item } },
});

const sourceRecord = record({
  SourceDomain: { type: "string" },
  DomainPublished: { type: "string" },
  Organization: { type: "string" },
  SourceIp: { type: "string" },
  Disposition: { type: "string" },
  ARC: { type: ["string", "null"] },
  DispositionCount: decimal,
  LastDate: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}$" },
  SPFDomain: { type: "string" },
  DKIMDomain: { type: "string" },
  ...counters,
  // Additions of issue 23: what names the source ("" when unknown).
  Service: { type: "string" },
  ServiceType: { type: "string" },
  ASN: { type: "string", pattern: "^([0-9]+)?$" },
  ASNOrganization: { type: "string" },
  Country: { type: "string", pattern: "^([A-Z]{2})?$" },
});

const share: Schema = { type: "string", pattern: "^[01]\\.[0-9]{4}$" };

const senderRecord = record({
  Domain: { type: "string" },
  Service: { type: "string" },
  ServiceType: { type: "string" },
  SenderKind: { enum: ["service", "base_domain", "asn", "unknown"] },
  NamedBy: { enum: ["rdns", "auth_domain", "asn", null] },
  ASN: { type: "string", pattern: "^([0-9]+)?$" },
  ASNOrganization: { type: "string" },
  Country: { type: "string", pattern: "^([A-Z]{2})?$" },
  SourceIPs: decimal,
  ...counters,
  DMARCShare: share,
  SPFAlignedShare: share,
  DKIMAlignedShare: share,
  Approved: { type: ["boolean", "null"] },
});

const nullableCount: Schema = { type: ["integer", "null"], minimum: 0 };

const senderApprovalRecord = record({
  Domain: { type: "string" },
  Kind: { enum: ["service", "range"] },
  Sender: { type: "string" },
  Approved: { type: "boolean" },
  AddressesAtApproval: nullableCount,
  AddressesNow: nullableCount,
  AddedCount: nullableCount,
  AddedSinceApproval: { type: ["array", "null"], items: { type: "string" }, maxItems: 1000 },
});

const impactCounts = {
  Stopped: decimal,
  Forwarded: decimal,
  LegitimateAtRisk: decimal,
  AbuseStopped: decimal,
};

const policyImpactSchema: Schema = {
  type: "object",
  additionalProperties: false,
  required: ["status", "policy", "total", "totals", "records"],
  properties: {
    status: { const: "SUCCESS" },
    policy: { enum: ["quarantine", "reject"] },
    total: { type: "integer", minimum: 0 },
    totals: record({ Volume: decimal, DMARC: decimal, ...impactCounts }),
    records: {
      type: "array",
      items: record({
        Domain: { type: "string" },
        Service: { type: "string" },
        ServiceType: { type: "string" },
        SenderKind: { enum: ["service", "base_domain", "asn", "unknown"] },
        Approved: { type: ["boolean", "null"] },
        SourceIPs: decimal,
        ...impactCounts,
      }),
    },
  },
};

export const successOnly: Schema = {
  type: "object",
  additionalProperties: false,
  required: ["status"],
  properties: { status: { const: "SUCCESS" } },
};

export const errorSchema: Schema = {
  type: "object",
  additionalProperties: false,
  required: ["status", "code", "message"],
  properties: { status: { const: "ERROR" }, code: { type: "string" }, message: { type: "string" } },
};

export const rootSchema: Schema = {
  type: "object",
  additionalProperties: false,
  required: ["status", "region", "links"],
  properties: {
    status: { const: "SUCCESS" },
    region: { enum: ["global", "eu"] },
    links: { type: "object", additionalProperties: { type: "string", format: "uri" } },
  },
};

const strings: Schema = { type: "array", items: { type: "string" } };
const nullableBoolean: Schema = { type: ["boolean", "null"] };
const nullableString: Schema = { type: ["string", "null"] };

const domainStatusSchema: Schema = {
  type: "object",
  additionalProperties: false,
  required: ["status", "domain", "checked_at", "ok", "dmarc", "authorization", "spf", "tls_rpt", "problems"],
  properties: {
    status: { const: "SUCCESS" },
    domain: { type: "string" },
    checked_at: { type: "string" },
    ok: { type: "boolean" },
    dmarc: record({
      name: { type: "string" },
      inherited_from: nullableString,
      record: nullableString,
      present: { type: "boolean" },
      valid: { type: "boolean" },
      error: nullableString,
      policy: nullableString,
      subdomain_policy: nullableString,
      pct: { type: ["integer", "null"] },
      rua: strings,
      ruf: strings,
      rua_points_here: nullableBoolean,
      ruf_points_here: nullableBoolean,
    }),
    authorization: record({ name: nullableString, served: nullableBoolean }),
    spf: record({
      record: nullableString,
      present: { type: "boolean" },
      safe_spf_root: nullableString,
      reaches_safe_spf_root: nullableBoolean,
      via: { enum: ["include", "redirect", null] },
      lookups: { type: "integer", minimum: 0 },
      errors: strings,
    }),
    // The TLS-RPT record (RFC 8460 §3) and the one to publish so that SMTP TLS reports come here.
    tls_rpt: record({
      name: { type: "string" },
      record: nullableString,
      present: { type: "boolean" },
      valid: { type: "boolean" },
      error: nullableString,
      rua: strings,
      rua_points_here: nullableBoolean,
      publish: nullableString,
    }),
    problems: { type: "array", items: record({ code: { type: "string" }, message: { type: "string" } }) },
  },
};

/** Rows of a report left out, for one reason (docs/limits.md). */
const droppedRows: Schema = record({
  reason: {
    enum: ["missing_source_ip", "invalid_source_ip", "missing_count", "invalid_count", "unexpanded_entity"],
  },
  rows: { type: "integer", minimum: 1 },
  first: { type: "string" },
});

const uploadItem: Schema = {
  oneOf: [
    record({
      kind: { const: "aggregate" },
      identity: { type: "string" },
      domain: { type: "string" },
      rows: { type: "integer" },
      messages: { type: "integer" },
      dropped: { type: "array", items: droppedRows },
      status: { enum: ["stored", "duplicate", "resumed"] },
    }),
    record({
      kind: { const: "failure" },
      identity: { type: "string" },
      domain: { type: "string" },
      rows: { type: "null" },
      messages: { type: "null" },
      dropped: { type: "null" },
      status: { enum: ["stored", "duplicate"] },
    }),
    record({
      kind: { const: "rejected" },
      code: { type: "string" },
      reason: { type: "string" },
      status: { enum: ["kept", "already_kept"] },
    }),
    // An SMTP TLS report (RFC 8460): its policy domains and sessions.
    record({
      kind: { const: "tls" },
      identity: { type: "string" },
      domain: { type: "string" },
      domains: { type: "array", items: { type: "string" } },
      sessions: { type: "integer", minimum: 0 },
      failedSessions: { type: "integer", minimum: 0 },
      rows: { type: "null" },
      messages: { type: "null" },
      dropped: { type: "null" },
      status: { enum: ["stored", "duplicate"] },
    }),
  ],
};

/** What an upload says of one input it received. */
const receivedInput: Record<string, Schema> = {
  sha256: { type: "string", pattern: "^[0-9a-f]{64}$" },
  bytes: { type: "integer" },
  archive: { enum: ["new", "seen"] },
  outcome: { enum: ["stored", "duplicate", "rejected"] },
  rowsDropped: { type: "integer", minimum: 0 },
  items: { type: "array", items: uploadItem },
};

const text: Schema = { type: "string" };
const nullableText: Schema = { type: ["string", "null"] };
const time: Schema = { type: "string", format: "date-time" };
const nullableTime: Schema = { type: ["string", "null"], format: "date-time" };
const capability: Schema = { enum: ["read", "write", "ingest", "admin"] };

const caller = record({
  status: { const: "SUCCESS" },
  kind: { enum: ["session", "key"] },
  tenant: record({ id: text, name: text, region: { enum: ["global", "eu"] } }),
  user: { oneOf: [{ type: "null" }, record({ id: text, email: nullableText })] },
  role: { enum: ["admin", "viewer", null] },
  capabilities: { type: "array", items: capability },
  csrf_token: nullableText,
  expires_at: nullableTime,
  report_addresses: { type: "array", items: text },
  mail_intake: {
    oneOf: [{ type: "null" }, record({ smtp: { type: "boolean" }, imap: { type: "boolean" } })],
  },
});

const passwordLink = {
  set_password_url: { type: "string", format: "uri" },
  expires_at: time,
};

const inputItem: Schema = {
  oneOf: [
    record({ kind: { const: "rejected" }, code: text, reason: text }),
    record({
      kind: { enum: ["aggregate", "failure", "tls"] },
      domain: text,
      rows: { type: ["integer", "null"] },
      messages: { type: ["integer", "null"] },
      status: { enum: ["stored", "duplicate", "resumed"] },
    }),
  ],
};

/** The dashboard's endpoints: sessions, people, keys and the intake's inputs. */
const dashboardSchemas: Record<string, Schema> = {
  sign_in: caller,
  session: caller,
  sign_out: successOnly,
  set_password: record({ status: { const: "SUCCESS" }, email: text }),
  users: list(
    record({
      UserId: text,
      Email: text,
      Role: { enum: ["admin", "viewer"] },
      PasswordSet: { type: "boolean" },
      Added: time,
      LastSignIn: nullableTime,
    }),
  ),
  add_user: record({
    status: { const: "SUCCESS" },
    user_id: text,
    email: text,
    outcome: { enum: ["created", "granted", "unchanged"] },
    ...passwordLink,
  }),
  user_role: successOnly,
  remove_user: record({ status: { const: "SUCCESS" }, erased: { type: "boolean" } }),
  password_link: record({ status: { const: "SUCCESS" }, email: text, ...passwordLink }),
  activity: list(
    record({
      Event: text,
      Subject: text,
      SubjectEmail: nullableText,
      CausedBy: text,
      CausedByEmail: nullableText,
      Time: time,
    }),
  ),
  api_keys: list(
    record({
      KeyId: text,
      Prefix: text,
      Scopes: { type: "array", items: { enum: ["read", "write", "ingest"] } },
      Created: time,
      Revoked: nullableTime,
    }),
  ),
  issue_api_key: record({
    status: { const: "SUCCESS" },
    key_id: text,
    api_key: text,
    scopes: { type: "array", items: { enum: ["read", "write", "ingest"] } },
  }),
  revoke_api_key: successOnly,
  inputs: list(
    record({
      Sha256: { type: "string", pattern: "^[0-9a-f]{64}$" },
      Bytes: { type: "integer" },
      Channel: text,
      Outcome: { enum: ["received", "stored", "duplicate", "rejected"] },
      Code: nullableText,
      Reason: nullableText,
      Items: { type: "array", items: inputItem },
      TimesReceived: { type: "integer" },
      FirstSeen: time,
      LastSeen: time,
      ProcessedAt: nullableTime,
    }),
  ),
  reprocess_input: record({
    status: { const: "SUCCESS" },
    sha256: text,
    before: { enum: ["received", "rejected"] },
    outcome: { enum: ["stored", "duplicate", "rejected"] },
    reason: nullableText,
  }),
};

/** Every rule the alerts have: the API lists and takes exactly these. */
const ruleName: Schema = { enum: [...ruleKinds] };
const numbers: Schema = { type: "object", additionalProperties: { type: "number" } };

const alertSchemas: Record<string, Schema> = {
  alert_rules: list(
    record({
      rule: ruleName,
      enabled: { type: "boolean" },
      params: numbers,
      set: { type: "boolean" },
      description: text,
    }),
  ),
  set_alert_rule: successOnly,
  alerts: list(
    record({
      id: text,
      rule: ruleName,
      domain: nullableText,
      period: record({ start: time, end: time, key: text }),
      summary: text,
      figures: { type: "object", additionalProperties: { type: ["string", "number", "boolean", "null"] } },
      items: {
        type: "array",
        items: { type: "object", additionalProperties: { type: ["string", "number", "boolean", "null"] } },
      },
      so_far: { type: "boolean" },
      revises: nullableText,
      caused_by: { type: "array", items: record({ stream: text, position: decimal }) },
      raised_at: time,
      acknowledged_at: nullableTime,
      acknowledged_by: nullableText,
    }),
  ),
  acknowledge_alert: successOnly,
  webhooks: list(
    record({
      id: text,
      url: text,
      alert_types: { type: "array", items: ruleName },
      description: text,
      enabled: { type: "boolean" },
      disabled_reason: nullableText,
      paused_at: nullableTime,
      paused_reason: nullableText,
      created_at: time,
      updated_at: time,
      health: record({
        last_success_at: nullableTime,
        last_failure_at: nullableTime,
        last_failure: nullableText,
        failing_since: nullableTime,
        pending: { type: "integer", minimum: 0 },
      }),
    }),
  ),
  add_webhook: record({
    status: { const: "SUCCESS" },
    webhook_id: text,
    secret: { type: "string", pattern: "^whsec_" },
  }),
  change_webhook: successOnly,
  webhook_deliveries: list(
    record({
      id: text,
      alert_id: text,
      endpoint_id: text,
      status: { enum: ["pending", "delivered", "failed", "endpoint_disabled"] },
      attempts: { type: "integer", minimum: 0 },
      last_status: { type: ["integer", "null"] },
      last_error: nullableText,
      next_attempt_at: nullableTime,
      last_attempt_at: nullableTime,
      delivered_at: nullableTime,
      created_at: time,
    }),
  ),
  redeliver_webhook: successOnly,
};
const personalDataPolicy: Schema = record({
  status: { const: "SUCCESS" },
  failure_report_days: { type: "integer", minimum: 1 },
  raw_input_days: { type: "integer", minimum: 1 },
  aggregate_days: { type: ["integer", "null"], minimum: 1 },
  redaction: { enum: ["on", "off"] },
});

export const responseSchemas: Record<string, Schema> = {
  events: record({
    status: { const: "SUCCESS" },
    events: { type: "array", items: { $ref: "#/components/schemas/FeedEvent" } },
    next: { type: "string", description: "after= this cursor gives the events that follow." },
  }),
  personal_data_policy: personalDataPolicy,
  update_personal_data_policy: personalDataPolicy,
  personal_data: record({
    status: { const: "SUCCESS" },
    keys_shredded: { type: "integer", minimum: 0 },
    failure_reports: { type: "integer", minimum: 0 },
    raw_inputs: { type: "integer", minimum: 0 },
    people: { type: "integer", minimum: 0 },
    admin: {
      oneOf: [{ type: "null" }, record({ email: text, set_password_url: text, expires_at: time })],
    },
  }),
  ...dashboardSchemas,
  ...alertSchemas,
  domain_status: domainStatusSchema,
  // A raw body is one input; a multipart/form-data body one input per file part.
  reports: {
    oneOf: [
      record({ status: { const: "SUCCESS" }, ...receivedInput }),
      record({
        status: { const: "SUCCESS" },
        inputs: {
          type: "array",
          items: record({
            field: { type: "string" },
            filename: { type: ["string", "null"] },
            ...receivedInput,
          }),
        },
      }),
    ],
  },
  aggregate_by_domain: list(record({ Domain: { type: "string" }, ...counters })),
  aggregate_by_domain_group: list(record({ DomainGroup: { type: "string" }, ...counters })),
  aggregate_by_unaligned_source: list(sourceRecord),
  aggregate_by_source: list(sourceRecord),
  aggregate_by_organization: list(record({ Organization: { type: "string" }, ...counters })),
  aggregate_by_date: list(
    record({
      Date: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}$" },
      ...counters,
      DispositionNone: decimal,
      DispositionQuarantine: decimal,
      DispositionReject: decimal,
    }),
  ),
  aggregate_by_sender: list(senderRecord),
  // SMTP TLS reports (RFC 8460): counts as decimal strings, "" for a field a report left out.
  tls_by_domain: list(
    record({
      Domain: { type: "string" },
      PolicyType: { type: "string", description: "sts, tlsa, no-policy-found, or the reporter's own word." },
      Reports: decimal,
      Sessions: decimal,
      Successful: decimal,
      Failed: decimal,
    }),
  ),
  tls_failures: list(
    record({
      Domain: { type: "string" },
      PolicyType: { type: "string" },
      ResultType: {
        type: "string",
        description: "One of the eleven of RFC 8460 §4.3, or the reporter's own word as it sent it.",
      },
      SendingMtaIp: { type: "string" },
      ReceivingMxHostname: { type: "string" },
      ReceivingIp: { type: "string" },
      Organization: { type: "string" },
      FailedSessions: decimal,
    }),
  ),
  tls_by_date: list(
    record({
      Date: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}$" },
      Reports: decimal,
      Sessions: decimal,
      Successful: decimal,
      Failed: decimal,
    }),
  ),
  sender_approval: successOnly,
  sender_approvals: list(senderApprovalRecord),
  policy_impact: policyImpactSchema,
  forensic: list(
    record({
      ForensicId: decimal,
      Subject: { type: "string" },
      Domain: { type: "string" },
      Received: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}$" },
      Amount: decimal,
      Headers: { type: "string" },
    }),
    decimal,
  ),
  failure_report: {
    type: "object",
    additionalProperties: false,
    required: ["status", "record"],
    properties: {
      status: { const: "SUCCESS" },
      record: record({
        ForensicId: decimal,
        Subject: { type: "string" },
        Domain: { type: "string" },
        Received: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}$" },
        Amount: decimal,
        Headers: { type: "string" },
        FeedbackType: { type: ["string", "null"] },
        SourceIp: { type: ["string", "null"] },
        AuthFailure: { type: ["string", "null"] },
        DeliveryResult: { type: ["string", "null"] },
        SpfResult: { type: ["string", "null"] },
        DkimResult: { type: ["string", "null"] },
      }),
    },
  },
  update_safe_spf: successOnly,
  "add-domain": record({ status: { const: "SUCCESS" }, added: { type: "boolean" } }),
  add_domain: record({ status: { const: "SUCCESS" }, added: { type: "boolean" } }),
  domain_group: successOnly,
  domains: list(
    record({
      Domain: { type: "string" },
      DomainGroup: { type: ["string", "null"] },
      Added: { type: "string" },
      SafeSpfStatus: { enum: ["pending", "computed", "failed", null] },
    }),
  ),
  history: {
    type: "object",
    additionalProperties: false,
    required: ["status", "domain", "total", "records"],
    properties: {
      status: { const: "SUCCESS" },
      domain: { type: "string" },
      total: { type: "integer" },
      records: {
        type: "array",
        items: record({
          Revision: decimal,
          Event: { type: "string" },
          Time: { type: "string" },
          CausedBy: { type: "string" },
          CorrelationId: { type: ["string", "null"] },
          Data: { type: "object" },
          Description: { type: "string" },
          CausedByEmail: { type: ["string", "null"] },
        }),
      },
    },
  },
  safe_spf: {
    type: "object",
    additionalProperties: false,
    required: ["status", "domain", "safe_spf"],
    properties: {
      status: { const: "SUCCESS" },
      domain: { type: "string" },
      safe_spf: {
        oneOf: [
          { type: "null" },
          record({
            original: { type: "string" },
            status: { enum: ["pending", "computed", "failed"] },
            records: {
              type: "array",
              items: record({ name: { type: "string" }, value: { type: "string" } }),
            },
            lookups_before: { type: ["integer", "null"] },
            lookups_after: { type: ["integer", "null"] },
            warnings: { type: "array", items: { type: "string" } },
            last_computed: { type: ["string", "null"] },
            last_error: { type: ["string", "null"] },
            retrying: { type: "boolean" },
            last_checked: { type: ["string", "null"] },
            next_check: { type: ["string", "null"] },
            refresh_state: { enum: ["current", "stale", "failing", null] },
            refresh: { type: ["string", "null"] },
          }),
        ],
      },
    },
  },
};
