import type { DomainEvent } from "@dmarc-ledger/events";
import type { Projection } from "@dmarc-ledger/projection-engine";
import type { Transaction } from "kysely";
import type { AlertsSchema } from "./schema.js";

/** alert_rule: each tenant's rule settings. */
export const alertRulesProjection: Projection<AlertsSchema> = {
  name: "alert_rules",
  tables: ["alert_rule"],
  handles: new Set(["AlertRuleSet"]),
  async apply(trx: Transaction<AlertsSchema>, events: readonly DomainEvent[]) {
    for (const event of events) {
      if (event.type !== "AlertRuleSet") continue;
      const row = {
        enabled: event.data.enabled,
        params: JSON.stringify(event.data.params),
        updated_at: event.recordedAt,
      };
      await trx
        .insertInto("alert_rule")
        .values({ tenant_id: event.data.tenantId, rule: event.data.rule, ...row })
        .onConflict((oc) => oc.columns(["tenant_id", "rule"]).doUpdateSet(row))
        .execute();
    }
  },
};

/** webhook_endpoint: each tenant's endpoints (their secrets are kept apart, never projected). */
export const webhookEndpointsProjection: Projection<AlertsSchema> = {
  name: "webhook_endpoints",
  tables: ["webhook_endpoint"],
  handles: new Set([
    "WebhookEndpointAdded",
    "WebhookEndpointChanged",
    "WebhookEndpointDisabled",
    "WebhookEndpointPaused",
    "WebhookEndpointResumed",
  ]),
  async apply(trx: Transaction<AlertsSchema>, events: readonly DomainEvent[]) {
    for (const event of events) {
      if (event.type === "WebhookEndpointAdded") {
        await trx
          .insertInto("webhook_endpoint")
          .values({
            endpoint_id: event.data.endpointId,
            tenant_id: event.data.tenantId,
            url: event.data.url,
            alert_types: JSON.stringify(event.data.alertTypes),
            description: event.data.description,
            enabled: true,
            disabled_reason: null,
            paused_at: null,
            paused_reason: null,
            created_at: event.recordedAt,
            updated_at: event.recordedAt,
          })
          .onConflict((oc) => oc.column("endpoint_id").doNothing())
          .execute();
      } else if (event.type === "WebhookEndpointChanged") {
        await trx
          .updateTable("webhook_endpoint")
          .set({
            url: event.data.url,
            alert_types: JSON.stringify(event.data.alertTypes),
            description: event.data.description,
            enabled: event.data.enabled,
            disabled_reason: null,
            updated_at: event.recordedAt,
          })
          .where("endpoint_id", "=", event.data.endpointId)
          .execute();
      } else if (event.type === "WebhookEndpointDisabled") {
        await trx
          .updateTable("webhook_endpoint")
          .set({ enabled: false, disabled_reason: event.data.reason, updated_at: event.recordedAt })
          .where("endpoint_id", "=", event.data.endpointId)
          .execute();
      } else if (event.type === "WebhookEndpointPaused") {
        await trx
          .updateTable("webhook_endpoint")
          .set({
            paused_at: event.recordedAt,
            paused_reason: event.data.reason,
            updated_at: event.recordedAt,
          })
          .where("endpoint_id", "=", event.data.endpointId)
          .execute();
      } else if (event.type === "WebhookEndpointResumed") {
        // updated_at restarts the time it may fail before it is paused again (delivery-worker.ts).
        await trx
          .updateTable("webhook_endpoint")
          .set({ paused_at: null, paused_reason: null, updated_at: event.recordedAt })
          .where("endpoint_id", "=", event.data.endpointId)
          .execute();
      }
    }
  },
};

/** alert: every alert raised, and whether it was acknowledged, for GET /alerts. */
export const alertsProjection: Projection<AlertsSchema> = {
  name: "alerts",
  tables: ["alert"],
  handles: new Set(["AlertRaised", "AlertAcknowledged"]),
  async apply(trx: Transaction<AlertsSchema>, events: readonly DomainEvent[]) {
    for (const event of events) {
      if (event.type === "AlertAcknowledged") {
        await trx
          .updateTable("alert")
          .set({ acknowledged_at: event.recordedAt, acknowledged_by: event.data.by })
          .where("alert_id", "=", event.data.alertId)
          .where("tenant_id", "=", event.data.tenantId)
          .execute();
        continue;
      }
      if (event.type !== "AlertRaised") continue;
      const alert = event.data;
      await trx
        .insertInto("alert")
        .values({
          alert_id: alert.alertId,
          position: event.position.toString(),
          tenant_id: alert.tenantId,
          rule: alert.rule,
          domain: alert.domain,
          period_start: alert.period.start,
          period_end: alert.period.end,
          summary: alert.summary,
          payload: JSON.stringify(alert),
          raised_at: event.recordedAt,
        })
        .onConflict((oc) => oc.column("alert_id").doNothing())
        .execute();
    }
  },
};

/** The alerts' read models, for allProjections (packages/runtime). The evaluator is not one of them. */
export const alertProjections: readonly Projection<AlertsSchema>[] = [
  alertRulesProjection,
  webhookEndpointsProjection,
  alertsProjection,
];
