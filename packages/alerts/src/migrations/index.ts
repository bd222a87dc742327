import type { MigrationSet } from "@dmarc-ledger/db";
import { alerts } from "./001_alerts.js";
import { alertDigest } from "./002_alert_digest.js";
import { alertDnsState } from "./003_alert_dns_state.js";
import { alertSenderState } from "./004_alert_sender_state.js";
import { alertKnownName } from "./005_alert_known_name.js";
import { alertMailUnaddressed } from "./006_alert_mail_unaddressed.js";
import { webhookFailureCategory } from "./007_webhook_failure_category.js";
import { webhookEndpointHealth } from "./008_webhook_endpoint_health.js";
import { alertFindings } from "./009_alert_findings.js";
import { webhookEndpointPause } from "./011_webhook_endpoint_pause.js";
import { alertAcknowledged } from "./013_alert_acknowledged.js";
import { alertTlsState } from "./014_alert_tls_state.js";
import { alertSourceNameAsApi } from "./015_alert_source_name_as_api.js";

/** The alerts' tables (schema.ts): rules, endpoints, alerts, the evaluator's state, the outboxes. */
export const alertsMigrations: MigrationSet = {
  name: "alerts",
  migrations: {
    "001_alerts": alerts,
    "002_alert_digest": alertDigest,
    "003_alert_dns_state": alertDnsState,
    "004_alert_sender_state": alertSenderState,
    "005_alert_known_name": alertKnownName,
    "006_alert_mail_unaddressed": alertMailUnaddressed,
    "007_webhook_failure_category": webhookFailureCategory,
    "008_webhook_endpoint_health": webhookEndpointHealth,
    "009_alert_findings": alertFindings,
    "011_webhook_endpoint_pause": webhookEndpointPause,
    "013_alert_acknowledged": alertAcknowledged,
    "014_alert_tls_state": alertTlsState,
    "015_alert_source_name_as_api": alertSourceNameAsApi,
  },
};
