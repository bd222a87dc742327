import {
  type AlertState,
  type AlertsSchema,
  acknowledgeAlert,
  addEndpoint,
  changeEndpoint,
  countEndpoints,
  InvalidEndpointError,
  InvalidRuleError,
  isRuleKind,
  listAlerts,
  listDeliveries,
  listEndpoints,
  maskedUrl,
  redeliver,
  ruleSpecs,
  sendKeptDeliveries,
  setAlertRule,
  tenantRules,
  UnknownAlertError,
  UnknownEndpointError,
} from "@dmarc-ledger/alerts";
import type { Kysely } from "kysely";
import { ApiError, badParameter } from "../api-error.js";
import type { Endpoint } from "../endpoints.js";
import { optionalField, requiredField } from "../params/form-field.js";
import { parseListParams } from "../params/list-params.js";
import { parsePageParams, requiredQuery } from "../params/page-params.js";
import { awaitProjection } from "../read-your-writes.js";
import type { ApiContext } from "../state.js";
import { peopleKeys } from "./session.js";

const alertsDb = (ctx: ApiContext) => ctx.deps.db as unknown as Kysely<AlertsSchema>;
const tenantOf = (ctx: ApiContext) => ctx.state.holder!.tenantId;
const meta = (ctx: ApiContext) => ({
  causedBy: ctx.state.holder!.causedBy,
  correlationId: ctx.state.requestId,
});

/** Errors of the alert commands as the API says them. */
async function answering<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof UnknownEndpointError) throw new ApiError(404, "unknown_webhook", error.message);
    if (error instanceof UnknownAlertError) throw new ApiError(404, "unknown_alert", error.message);
    if (error instanceof InvalidEndpointError) throw new ApiError(400, "invalid_webhook", error.message);
    if (error instanceof InvalidRuleError) throw new ApiError(400, "invalid_rule", error.message);
    throw error;
  }
}

function booleanField(ctx: ApiContext, name: string): boolean | undefined {
  const value = optionalField(ctx, name);
  if (value === undefined) return undefined;
  if (value !== "true" && value !== "false") throw badParameter(name, 'must be "true" or "false".');
  return value === "true";
}

/** alert_types: rule names separated by commas; empty or absent: every rule. */
function alertTypesField(ctx: ApiContext): string[] | undefined {
  const value = optionalField(ctx, "alert_types");
  if (value === undefined) return undefined;
  return value
    .split(",")
    .map((type) => type.trim())
    .filter((type) => type !== "");
}

export const alertRulesEndpoint: Endpoint = {
  name: "alert_rules",
  method: "GET",
  scope: "read",
  summary: "This account's alert rules: each rule, whether it is on, its parameters (defaults filled in).",
  handler: async (ctx) => {
    parsePageParams(ctx.query);
    const rules = await tenantRules(alertsDb(ctx), tenantOf(ctx));
    ctx.body = {
      status: "SUCCESS",
      total: rules.length,
      records: rules.map((rule) => ({
        rule: rule.rule,
        enabled: rule.enabled,
        params: rule.params,
        set: rule.set,
        description: ruleSpecs[rule.rule].description,
      })),
    };
  },
};

export const setAlertRuleEndpoint: Endpoint = {
  name: "set_alert_rule",
  method: "PUT",
  scope: "write",
  summary:
    'Sets an alert rule (fields rule, enabled "true" or "false", and optionally params: a JSON object of the rule\'s numbers; those left out take their default).',
  handler: async (ctx) => {
    const rule = requiredField(ctx, "rule");
    if (!isRuleKind(rule)) throw badParameter("rule", `is not a rule; GET alert_rules lists them.`);
    const enabled = booleanField(ctx, "enabled");
    if (enabled === undefined) throw badParameter("enabled", "is required.");
    const rawParams = optionalField(ctx, "params");
    let params: Record<string, unknown> = {};
    if (rawParams !== undefined) {
      try {
        params = JSON.parse(rawParams);
      } catch {
        throw badParameter("params", 'must be a JSON object such as {"threshold_percent": 5}.');
      }
      if (!params || typeof params !== "object" || Array.isArray(params)) {
        throw badParameter("params", 'must be a JSON object such as {"threshold_percent": 5}.');
      }
    }
    const position = await answering(() =>
      setAlertRule(ctx.deps.store, { tenantId: tenantOf(ctx), rule, enabled, params }, meta(ctx)),
    );
    await awaitProjection(ctx, position);
    ctx.body = { status: "SUCCESS" };
  },
};

const alertStates: readonly AlertState[] = ["open", "acknowledged"];

/**
 * The period of GET alerts when start or end is given (as the listings take them: end defaults to
 * now, start to 30 days before end); undefined without either: every alert.
 */
function alertPeriod(ctx: ApiContext): { start: Date; end: Date } | undefined {
  const { start, end } = ctx.query;
  if (start === undefined && end === undefined) return undefined;
  const period = parseListParams(
    { ...(start === undefined ? {} : { start }), ...(end === undefined ? {} : { end }) },
    tenantOf(ctx),
  );
  return { start: new Date(period.start * 1000), end: new Date(period.end * 1000 + 999) };
}

export const alertsEndpoint: Endpoint = {
  name: "alerts",
  method: "GET",
  scope: "read",
  summary:
    "The alerts raised for this account, newest first (optionally of one rule, domain, state open or acknowledged, or period).",
  handler: async (ctx) => {
    const { page, perPage } = parsePageParams(ctx.query, ["rule", "domain", "state", "start", "end"]);
    const rule = typeof ctx.query.rule === "string" ? ctx.query.rule : undefined;
    if (rule !== undefined && !isRuleKind(rule))
      throw badParameter("rule", "is not a rule; GET alert_rules lists them.");
    const domain = typeof ctx.query.domain === "string" ? ctx.query.domain.toLowerCase() : undefined;
    const state = ctx.query.state;
    if (state !== undefined && !alertStates.includes(state as AlertState))
      throw badParameter("state", 'must be "open" or "acknowledged".');
    const period = alertPeriod(ctx);
    const listed = await listAlerts(alertsDb(ctx), tenantOf(ctx), {
      ...(rule ? { rule } : {}),
      ...(domain ? { domain } : {}),
      ...(state ? { state: state as AlertState } : {}),
      ...(period ? { period } : {}),
      limit: perPage,
      offset: (page - 1) * perPage,
    });
    ctx.body = { status: "SUCCESS", ...listed };
  },
};

export const acknowledgeAlertEndpoint: Endpoint = {
  name: "acknowledge_alert",
  method: "PUT",
  scope: "write",
  summary: "Acknowledges an alert (field alert_id): it is seen to. Acknowledging it again changes nothing.",
  handler: async (ctx) => {
    const alertId = requiredField(ctx, "alert_id");
    const position = await answering(() =>
      acknowledgeAlert(
        ctx.deps.store,
        { tenantId: tenantOf(ctx), alertId, by: ctx.state.holder!.causedBy },
        meta(ctx),
      ),
    );
    await awaitProjection(ctx, position);
    ctx.body = { status: "SUCCESS" };
  },
};

export const webhooksEndpoint: Endpoint = {
  name: "webhooks",
  method: "GET",
  scope: "read",
  summary:
    "This account's webhook endpoints (never their secrets); to a caller who may not change them (a viewer, a read-only key), each URL's path and query masked.",
  handler: async (ctx) => {
    const { page, perPage } = parsePageParams(ctx.query);
    const [total, records] = await Promise.all([
      countEndpoints(alertsDb(ctx), tenantOf(ctx)),
      listEndpoints(alertsDb(ctx), tenantOf(ctx), { limit: perPage, offset: (page - 1) * perPage }),
    ]);
    // A URL may carry a chat service's token: only who may change the endpoint sees it whole.
    const whole = ctx.state.holder!.capabilities.includes("write");
    ctx.body = {
      status: "SUCCESS",
      total,
      records: whole ? records : records.map((record) => ({ ...record, url: maskedUrl(record.url) })),
    };
  },
};

export const addWebhookEndpoint: Endpoint = {
  name: "add_webhook",
  method: "PUT",
  scope: "write",
  summary:
    "Adds a webhook endpoint (fields url, optionally alert_types: rules separated by commas, description). Answers its signing secret, this once.",
  handler: async (ctx) => {
    const url = refusingPortZero(requiredField(ctx, "url"));
    const alertTypes = alertTypesField(ctx);
    const description = optionalField(ctx, "description");
    const added = await answering(() =>
      addEndpoint(
        ctx.deps.store,
        alertsDb(ctx),
        {
          tenantId: tenantOf(ctx),
          url,
          ...(alertTypes ? { alertTypes } : {}),
          ...(description ? { description } : {}),
        },
        meta(ctx),
        {
          allowPrivate: ctx.deps.config.allowPrivateWebhookAddresses,
          ...ctx.deps.config.webhookLimits,
          keys: peopleKeys(ctx),
        },
      ),
    );
    await awaitProjection(ctx, added.position);
    ctx.body = { status: "SUCCESS", webhook_id: added.endpointId, secret: added.secret };
  },
};

export const changeWebhookEndpoint: Endpoint = {
  name: "change_webhook",
  method: "PUT",
  scope: "write",
  summary:
    'Changes a webhook endpoint (field webhook_id, and any of url, alert_types, description, enabled "true" or "false": "true" also resumes one the service paused, and sends what it kept).',
  handler: async (ctx) => {
    const endpointId = requiredField(ctx, "webhook_id");
    const url = optionalField(ctx, "url");
    if (url) refusingPortZero(url);
    const alertTypes = alertTypesField(ctx);
    const description = optionalField(ctx, "description");
    const enabled = booleanField(ctx, "enabled");
    const position = await answering(() =>
      changeEndpoint(
        ctx.deps.store,
        {
          tenantId: tenantOf(ctx),
          endpointId,
          ...(url ? { url } : {}),
          ...(alertTypes ? { alertTypes } : {}),
          ...(description !== undefined ? { description } : {}),
          ...(enabled !== undefined ? { enabled } : {}),
        },
        meta(ctx),
        { allowPrivate: ctx.deps.config.allowPrivateWebhookAddresses, ...ctx.deps.config.webhookLimits },
      ),
    );
    // Resumed: what the endpoint kept while paused goes now, not at each delivery's next retry.
    if (enabled === true) await sendKeptDeliveries(alertsDb(ctx), endpointId);
    await awaitProjection(ctx, position);
    ctx.body = { status: "SUCCESS" };
  },
};

export const webhookDeliveriesEndpoint: Endpoint = {
  name: "webhook_deliveries",
  method: "GET",
  scope: "read",
  summary:
    "A webhook endpoint's delivery log, newest first (query webhook_id): status, attempts, last error.",
  handler: async (ctx) => {
    const { page, perPage } = parsePageParams(ctx.query, ["webhook_id"]);
    const endpointId = requiredQuery(ctx.query, "webhook_id");
    const listed = await listDeliveries(alertsDb(ctx), tenantOf(ctx), endpointId, {
      limit: perPage,
      offset: (page - 1) * perPage,
    });
    if (!listed) throw new ApiError(404, "unknown_webhook", `no webhook endpoint ${endpointId}`);
    ctx.body = { status: "SUCCESS", ...listed };
  },
};

export const redeliverWebhookEndpoint: Endpoint = {
  name: "redeliver_webhook",
  method: "PUT",
  scope: "write",
  summary: "Sends a delivery again (field delivery_id), with the same webhook-id and body.",
  handler: async (ctx) => {
    const deliveryId = requiredField(ctx, "delivery_id");
    await answering(() => redeliver(alertsDb(ctx), { tenantId: tenantOf(ctx), deliveryId }));
    ctx.body = { status: "SUCCESS" };
  },
};

/** Port 0 is no port a receiver listens on: refused here, before the URL's other checks. */
function refusingPortZero(url: string): string {
  let port: string | null = null;
  try {
    port = new URL(url).port;
  } catch {
    // Not a URL: the endpoint's own check says so.
  }
  if (port === "0")
    throw new ApiError(400, "invalid_webhook", "The URL's port 0 is not a port to deliver to.");
  return url;
}
