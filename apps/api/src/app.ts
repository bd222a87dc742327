import { processRateLimiter } from "@dmarc-ledger/rate-limits";
import { defaultUserSettings } from "@dmarc-ledger/users";
import { bodyParser } from "@koa/bodyparser";
import Router from "@koa/router";
import Koa from "koa";
import { AnswerCache } from "./answer-cache.js";
import { ApiError, bodyTooLarge } from "./api-error.js";
import type { Endpoint } from "./endpoints.js";
import { accessLog } from "./middleware/access-log.js";
import { identify, requireAuthentication, requireCsrfToken } from "./middleware/authenticate.js";
import { dashboardFiles } from "./middleware/dashboard-files.js";
import { edgeChecks } from "./middleware/edge-checks.js";
import { errorHandler } from "./middleware/error-handler.js";
import { noStoreApiAnswers } from "./middleware/no-store.js";
import { rateLimit } from "./middleware/rate-limit.js";
import { requestId } from "./middleware/request-id.js";
import { createServiceMetrics } from "./observability/metrics.js";
import { formFieldsOf, openApiDocument } from "./openapi.js";
import { addDomainEndpoints } from "./routes/add-domain.js";
import { aggregateByDateEndpoint } from "./routes/aggregate-by-date.js";
import {
  aggregateByDomainEndpoint,
  aggregateByDomainGroupEndpoint,
  aggregateByOrganizationEndpoint,
  aggregateBySourceEndpoint,
  aggregateByUnalignedSourceEndpoint,
  forensicEndpoint,
} from "./routes/aggregates.js";
import {
  acknowledgeAlertEndpoint,
  addWebhookEndpoint,
  alertRulesEndpoint,
  alertsEndpoint,
  changeWebhookEndpoint,
  redeliverWebhookEndpoint,
  setAlertRuleEndpoint,
  webhookDeliveriesEndpoint,
  webhooksEndpoint,
} from "./routes/alerts.js";
import { apiKeysEndpoint, issueApiKeyEndpoint, revokeApiKeyEndpoint } from "./routes/api-keys.js";
import { domainStatusEndpoint } from "./routes/domain-status.js";
import { domainGroupEndpoint, domainsEndpoint, historyEndpoint } from "./routes/domains.js";
import { eventsEndpoint } from "./routes/events.js";
import { failureReportEndpoint } from "./routes/failure-report.js";
import { inputsEndpoint, reprocessInputEndpoint } from "./routes/inputs.js";
import { operationsRouter } from "./routes/operations.js";
import {
  activityEndpoint,
  addUserEndpoint,
  passwordLinkEndpoint,
  removeUserEndpoint,
  userRoleEndpoint,
  usersEndpoint,
} from "./routes/people.js";
import {
  erasePersonalDataEndpoint,
  personalDataPolicyEndpoint,
  setPersonalDataPolicyEndpoint,
} from "./routes/personal-data.js";
import { policyImpactEndpoint } from "./routes/policy-impact.js";
import { uploadReportsEndpoint } from "./routes/reports.js";
import { rootHandler } from "./routes/root.js";
import { safeSpfEndpoint, updateSafeSpfEndpoint } from "./routes/safe-spf.js";
import {
  aggregateBySenderEndpoint,
  senderApprovalEndpoint,
  senderApprovalsEndpoint,
} from "./routes/senders.js";
import { sessionEndpoint, setPasswordEndpoint, signInEndpoint, signOutEndpoint } from "./routes/session.js";
import { tlsByDateEndpoint, tlsByDomainEndpoint, tlsFailuresEndpoint } from "./routes/tls.js";
import type { ApiContext, ApiDeps, ApiState, ServedDeps } from "./state.js";

/** Every endpoint below /api/: the router, the root's links and the OpenAPI document come from it. */
export const endpoints: readonly Endpoint[] = [
  aggregateByDomainEndpoint,
  aggregateByDomainGroupEndpoint,
  aggregateByUnalignedSourceEndpoint,
  aggregateBySourceEndpoint,
  aggregateByOrganizationEndpoint,
  aggregateByDateEndpoint,
  forensicEndpoint,
  failureReportEndpoint,
  updateSafeSpfEndpoint,
  ...addDomainEndpoints,
  domainGroupEndpoint,
  domainsEndpoint,
  historyEndpoint,
  safeSpfEndpoint,
  uploadReportsEndpoint,
  domainStatusEndpoint,
  inputsEndpoint,
  reprocessInputEndpoint,
  // Who sends as the tenant's domains (issue 23).
  aggregateBySenderEndpoint,
  senderApprovalEndpoint,
  senderApprovalsEndpoint,
  policyImpactEndpoint,
  // SMTP TLS reports (RFC 8460, issue 43).
  tlsByDomainEndpoint,
  tlsFailuresEndpoint,
  tlsByDateEndpoint,
  personalDataPolicyEndpoint,
  setPersonalDataPolicyEndpoint,
  erasePersonalDataEndpoint,
  // The dashboard's: sessions, people and keys.
  signInEndpoint,
  sessionEndpoint,
  signOutEndpoint,
  setPasswordEndpoint,
  usersEndpoint,
  addUserEndpoint,
  userRoleEndpoint,
  removeUserEndpoint,
  passwordLinkEndpoint,
  activityEndpoint,
  apiKeysEndpoint,
  issueApiKeyEndpoint,
  revokeApiKeyEndpoint,
  // Alerts: rules, what they raised, and the webhooks that carry them (docs/alerts.md).
  alertRulesEndpoint,
  setAlertRuleEndpoint,
  alertsEndpoint,
  acknowledgeAlertEndpoint,
  webhooksEndpoint,
  addWebhookEndpoint,
  changeWebhookEndpoint,
  webhookDeliveriesEndpoint,
  redeliverWebhookEndpoint,
  // The tenant's events, to replay, tail and rebuild from (issue 44, docs/api.md "Events").
  eventsEndpoint,
];

function requireScope(endpoint: Endpoint) {
  return async (ctx: ApiContext, next: () => Promise<void>) => {
    const { scope } = endpoint;
    const holder = ctx.state.holder;
    if (scope !== "public" && !holder!.capabilities.includes(scope)) {
      throw holder!.session
        ? new ApiError(
            403,
            "missing_scope",
            scope === "read" ? "Your role cannot do this." : "Only an admin of this account can do this.",
          )
        : new ApiError(
            403,
            "missing_scope",
            scope === "admin"
              ? "Only an admin signed in to the dashboard can do this; keys cannot."
              : `This key lacks the "${scope}" scope needed here.`,
          );
    }
    await next();
  };
}

function requireForm(ctx: ApiContext, next: () => Promise<void>) {
  if (ctx.request.length && !ctx.is("application/x-www-form-urlencoded", "application/json")) {
    throw new ApiError(415, "unsupported_media_type", "Send the body as form fields or JSON.");
  }
  return next();
}

/** Turns what the router left unanswered into the contract's 404 and 405 (501 too: any other verb). */
async function answerUnrouted(ctx: ApiContext, next: () => Promise<void>) {
  await next();
  if (ctx.body !== undefined && ctx.body !== null) return;
  if (ctx.status === 405 || ctx.status === 501) {
    const allow = String(ctx.response.get("Allow") || "");
    throw new ApiError(
      405,
      "method_not_allowed",
      `${ctx.method} is not allowed here; use ${allow || "another method"}.`,
      {
        Allow: allow,
      },
    );
  }
  if (ctx.status === 404) throw new ApiError(404, "not_found", `There is no endpoint at ${ctx.path}.`);
}

export function createApiApp(deps: ApiDeps): Koa<ApiState, { deps: ServedDeps }> {
  const app = new Koa<ApiState, { deps: ServedDeps }>({ proxy: false });
  const metrics = deps.metrics ?? createServiceMetrics(deps);
  const answers = deps.answers ?? new AnswerCache(deps.config.answerCacheBytes);
  // Routes count into the same metrics (uploads, say), made here when the caller gave none.
  app.context.deps = {
    ...deps,
    metrics,
    answers,
    users: deps.users ?? defaultUserSettings,
    webRoot: deps.webRoot ?? null,
  };
  // Koa would print stacks of unhandled errors to stderr; ours are logged by errorHandler.
  app.silent = true;

  // Health, metrics and the API's description answer without a key.
  const publicRoutes = operationsRouter(metrics.registry);
  publicRoutes.get("/api/openapi.json", async (ctx) => {
    ctx.body = openApiDocument(endpoints, ctx.deps.config.publicBaseUrl, ctx.deps.config.region);
  });

  const router = new Router<ApiState, { deps: ServedDeps }>({ prefix: "/api" });
  router.get("/", rootHandler([...endpoints]));
  for (const endpoint of endpoints) {
    const path = `/${endpoint.name}`;
    if (endpoint.method === "GET") router.get(path, requireScope(endpoint), endpoint.handler);
    else if (endpoint.method === "POST") router.post(path, requireScope(endpoint), endpoint.handler);
    else if (endpoint.method === "DELETE") router.delete(path, requireScope(endpoint), endpoint.handler);
    else router.put(path, requireScope(endpoint), requireForm, endpoint.handler);
  }

  const body = bodyParser({
    enableTypes: ["form", "json"],
    formLimit: `${deps.config.maxBodyBytes}b`,
    jsonLimit: `${deps.config.maxBodyBytes}b`,
    encoding: "utf-8",
  });

  const knownPaths = new Set(["/api/", ...endpoints.map((endpoint) => `/api/${endpoint.name}`)]);
  const publicPaths = new Set(
    endpoints.filter((endpoint) => endpoint.scope === "public").map((endpoint) => `/api/${endpoint.name}`),
  );
  app.use(requestId);
  app.use(accessLog(knownPaths, metrics.httpRequestDuration));
  app.use(noStoreApiAnswers);
  app.use(errorHandler);
  app.use(publicRoutes.routes());
  if (deps.webRoot) app.use(dashboardFiles(deps.webRoot));
  app.use(identify);
  app.use(rateLimit(deps.rateLimiter ?? processRateLimiter(deps.config.rateLimit)));
  app.use(requireAuthentication(publicPaths));
  app.use(requireCsrfToken(publicPaths));
  app.use(async (ctx, next) => {
    if (ctx.method === "PUT" && ctx.request.length > deps.config.maxBodyBytes) {
      throw bodyTooLarge("Bodies", deps.config.maxBodyBytes, "MAX_BODY_BYTES");
    }
    await next();
  });
  app.use((ctx, next) => {
    // POST bodies are raw report files, streamed by their handler under their own limit.
    if (ctx.method === "POST") (ctx as { disableBodyParser?: boolean }).disableBodyParser = true;
    return body(ctx, next);
  });
  // Every parameter and body field checked once here, before any endpoint reads it.
  app.use(
    edgeChecks((path) => (path.startsWith("/api/") ? formFieldsOf(path.slice("/api/".length)) : undefined)),
  );
  app.use(answerUnrouted);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
