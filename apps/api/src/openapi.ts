import { feedEventComponents } from "@dmarc-ledger/event-feed";
import type { Endpoint } from "./endpoints.js";
import { errorSchema, responseSchemas, rootSchema } from "./openapi-schemas.js";
import { maxFilesPerUpload } from "./routes/multipart.js";

const listParameters = [
  {
    name: "start",
    in: "query",
    description: "Start of the period, Unix seconds, inclusive (default end - 30 days).",
    schema: { type: "integer", minimum: 0 },
  },
  {
    name: "end",
    in: "query",
    description: "End of the period, Unix seconds, inclusive (default now).",
    schema: { type: "integer", minimum: 0 },
  },
  {
    name: "page",
    in: "query",
    description: "Page, from 1.",
    schema: { type: "integer", minimum: 1, default: 1 },
  },
  {
    name: "per_page",
    in: "query",
    description: "Records per page.",
    schema: { type: "integer", minimum: 1, maximum: 1000, default: 100 },
  },
  {
    name: "domain",
    in: "query",
    description: "Only this one of your domains and its subdomains' reports (404 for any other).",
    schema: { type: "string" },
  },
];

/** aggregate_by_date's own parameters, beside the listings'. */
const dateSeriesParameters = [
  {
    name: "bucket",
    in: "query",
    description:
      "day (UTC), week (ISO, from Monday) or month (calendar); each record's Date is its bucket's first day. A period of more than 1000 buckets is refused (400).",
    schema: { enum: ["day", "week", "month"], default: "day" },
  },
  {
    name: "group",
    in: "query",
    description:
      "Only your domains in this group now, and their subdomains' reports (404 when none is in it).",
    schema: { type: "string" },
  },
];

/** aggregate_by_source's and aggregate_by_unaligned_source's own filter, beside the listings'. */
const sourceFilterParameters = [
  {
    name: "sender",
    in: "query",
    description:
      "Only the sources of this sender, as aggregate_by_sender's Service names it exactly (a service, a base domain, an AS's organisation, or \"unknown\").",
    schema: { type: "string", minLength: 1, maxLength: 1000 },
  },
];

/** Query parameters and form fields of the endpoints that are not plain period listings. */
const extraParameters: Record<string, { query?: string[]; form?: string[] }> = {
  domains: { query: ["page", "per_page"] },
  history: { query: ["domain", "page", "per_page"] },
  safe_spf: { query: ["domain"] },
  domain_status: { query: ["domain"] },
  update_safe_spf: { form: ["domain", "original"] },
  "add-domain": { form: ["domain"] },
  add_domain: { form: ["domain"] },
  domain_group: { form: ["domain", "group"] },
  sign_in: { form: ["email", "password"] },
  session: { query: [] },
  sign_out: { form: ["everywhere"] },
  set_password: { form: ["token", "password"] },
  users: { query: ["page", "per_page"] },
  add_user: { form: ["email", "role"] },
  user_role: { form: ["user_id", "role"] },
  remove_user: { form: ["user_id"] },
  password_link: { form: ["user_id"] },
  activity: { query: ["page", "per_page"] },
  api_keys: { query: [] },
  issue_api_key: { form: ["scopes"] },
  revoke_api_key: { form: ["key_id"] },
  inputs: { query: ["start", "end", "page", "per_page", "domain", "status"] },
  failure_report: { query: ["forensic_id"] },
  reprocess_input: { form: ["sha256"] },
  alert_rules: { query: [] },
  set_alert_rule: { form: ["rule", "enabled", "params"] },
  alerts: { query: ["start", "end", "page", "per_page", "rule", "domain", "state"] },
  acknowledge_alert: { form: ["alert_id"] },
  webhooks: { query: ["page", "per_page"] },
  add_webhook: { form: ["url", "alert_types", "description"] },
  change_webhook: { form: ["webhook_id", "url", "alert_types", "description", "enabled"] },
  webhook_deliveries: { query: ["webhook_id", "page", "per_page"] },
  redeliver_webhook: { form: ["delivery_id"] },
  aggregate_by_date: { query: ["start", "end", "page", "per_page", "domain", "bucket", "group"] },
  aggregate_by_source: { query: ["start", "end", "page", "per_page", "domain", "sender"] },
  aggregate_by_unaligned_source: { query: ["start", "end", "page", "per_page", "domain", "sender"] },
  tls_by_date: { query: ["start", "end", "page", "per_page", "domain", "bucket", "group"] },
  sender_approval: { form: ["domain", "service", "range", "approved"] },
  policy_impact: { query: ["start", "end", "page", "per_page", "domain", "policy"] },
  personal_data_policy: { query: [] },
  personal_data: { query: ["confirm"] },
  update_personal_data_policy: {
    form: ["failure_report_days", "raw_input_days", "aggregate_days", "redaction"],
  },
  events: { query: ["after", "limit", "wait", "domain", "before"] },
};

/** GET events' parameters (docs/api.md, "Events"). */
const eventsParameters: Record<string, object> = {
  after: {
    name: "after",
    in: "query",
    description:
      "A cursor an earlier answer gave (next, or an event's cursor): the events after it. Absent: from the first.",
    schema: { type: "string" },
  },
  limit: {
    name: "limit",
    in: "query",
    description: "Most events in the answer (fewer when their data passes 8 MiB).",
    schema: { type: "integer", minimum: 1, maximum: 1000, default: 100 },
  },
  wait: {
    name: "wait",
    in: "query",
    description: "Seconds to wait for the next event when there is none yet (long polling).",
    schema: { type: "integer", minimum: 0, maximum: 30, default: 0 },
  },
  domain: {
    name: "domain",
    in: "query",
    description:
      "With before: instead of your feed, the report events of this one of your domains and its subdomains before the bound (the reports a domain added later brings).",
    schema: { type: "string" },
  },
  before: {
    name: "before",
    in: "query",
    description: "With domain: the cursor of the DomainAdded event that brought the domain.",
    schema: { type: "string" },
  },
};

/** The fields of a PUT endpoint's body as this document lists them; undefined for the others. */
export const formFieldsOf = (endpointName: string): readonly string[] | undefined =>
  extraParameters[endpointName]?.form;

/** Form fields that may be left out. */
const optionalFields = new Set([
  "group",
  "everywhere",
  "scopes",
  "failure_report_days",
  "raw_input_days",
  "aggregate_days",
  "redaction",
  "service",
  "range",
  "params",
  "alert_types",
  "description",
]);
/** Form fields whose values the description narrows (the others are plain strings). */
const formFieldSchemas: Record<string, object> = {
  failure_report_days: {
    type: "string",
    pattern: "^[0-9]+$",
    description: "Days (1 to 3650) failure reports' personal fields and /forensic rows are kept.",
  },
  raw_input_days: {
    type: "string",
    pattern: "^[0-9]+$",
    description: "Days (1 to 3650) the raw archive keeps the bytes of your inputs.",
  },
  aggregate_days: {
    type: "string",
    pattern: "^([0-9]+|keep)$",
    description:
      "Days (1 to 3650) the aggregate facts are kept, or keep (the default): kept until set otherwise. The next retention run removes the facts of the days before the cutoff day (UTC), for good.",
  },
  redaction: { enum: ["on", "off"] },
};

/** Fields optional in one endpoint only. */
const optionalIn: Record<string, string[]> = { change_webhook: ["url", "enabled"] };

const errorStatuses: Record<string, string> = {
  "400": "Invalid parameter or body.",
  "401": "Missing or unknown API key, or no live session; sign_in: wrong address or password.",
  "403":
    "The key lacks the scope, or the session's role does not allow it, or a session's write lacks its CSRF token.",
  "404": "The domain (or user, key, input) is not one of yours.",
  "409":
    "Conflict (the domain, a parent or a subdomain of it belongs to another account; the last admin; an input the archive kept no bytes of).",
  "413": "Body too large.",
  "415": "Unsupported media type.",
  "421": "The key belongs to the other region.",
  "422": "Invalid SPF record.",
  "429": "Rate limited (sign_in: too many failed sign-ins for the account or from the address).",
  "500": "Internal error (quote the request id).",
  "503": "Not ready (the message says what is missing).",
};

/** What any request with a key can meet: authentication, region, rate limit, our own failure. */
const keyedErrors = ["401", "421", "429", "500"];

/** The statuses an endpoint's handler gives beyond keyedErrors and its method's (see errorsOf). */
const handlerErrors: Record<string, string[]> = {
  "add-domain": ["409"],
  add_domain: ["409"],
  domain_group: ["404"],
  history: ["404"],
  safe_spf: ["404"],
  update_safe_spf: ["404", "422"],
  user_role: ["404", "409"],
  remove_user: ["404", "409"],
  password_link: ["404"],
  revoke_api_key: ["404"],
  reprocess_input: ["404", "409"],
  inputs: ["404"],
  failure_report: ["404"],
  aggregate_by_domain: ["404"],
  aggregate_by_domain_group: ["404"],
  aggregate_by_source: ["404"],
  aggregate_by_unaligned_source: ["404"],
  aggregate_by_organization: ["404"],
  forensic: ["404"],
  change_webhook: ["404"],
  webhook_deliveries: ["404"],
  redeliver_webhook: ["404"],
  acknowledge_alert: ["404"],
  aggregate_by_date: ["404"],
  aggregate_by_sender: ["404"],
  sender_approval: ["404"],
  policy_impact: ["404"],
  events: ["404"],
  tls_by_domain: ["404"],
  tls_failures: ["404"],
  tls_by_date: ["404"],
};

/** Every error an operation can really answer with, and no other. */
function errorsOf(endpoint: Endpoint): string[] {
  // 400: a bad parameter (GET) or a missing field (PUT); 403: the key lacks the endpoint's scope.
  // POST reports: 400 for an empty body, 413 past MAX_REPORT_BYTES; any media type is a report.
  const byMethod =
    endpoint.method === "PUT"
      ? ["400", "403", "413", "415"]
      : endpoint.method === "POST"
        ? ["400", "403", "413"]
        : ["400", "403"];
  // Signing in and setting a password need no key: no 403, no 421; sign_in is throttled (429).
  const base = endpoint.scope === "public" ? ["401", "429", "500"] : keyedErrors;
  const own = endpoint.scope === "public" ? byMethod.filter((status) => status !== "403") : byMethod;
  return [...new Set([...base, ...own, ...(handlerErrors[endpoint.name] ?? [])])].sort();
}

function errorResponses(statuses: readonly string[]) {
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      {
        description: errorStatuses[status],
        content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
      },
    ]),
  );
}

/** One query parameter of an endpoint that lists its own (extraParameters). */
function queryParameter(endpointName: string, name: string) {
  if (name === "policy")
    return {
      name,
      in: "query",
      required: true,
      description: "The stricter policy to weigh.",
      schema: { enum: ["quarantine", "reject"] },
    };
  if (name === "status")
    return { name, in: "query", schema: { enum: ["received", "stored", "duplicate", "rejected"] } };
  if (name === "rule" || (name === "domain" && endpointName === "alerts"))
    return { name, in: "query", schema: { type: "string" } };
  if (name === "state" && endpointName === "alerts")
    return {
      name,
      in: "query",
      description: "open: not acknowledged yet; acknowledged: seen to.",
      schema: { enum: ["open", "acknowledged"] },
    };
  if (endpointName === "alerts" && (name === "start" || name === "end"))
    return {
      name,
      in: "query",
      description:
        name === "start"
          ? "Only alerts whose period ends at or after this, Unix seconds (default end - 30 days when only end is given)."
          : "Only alerts whose period starts at or before this, Unix seconds (default now when only start is given). Neither: every alert.",
      schema: { type: "integer", minimum: 0 },
    };
  if (name === "webhook_id") return { name, in: "query", required: true, schema: { type: "string" } };
  if (endpointName === "events") return eventsParameters[name];
  if (name === "forensic_id")
    return { name, in: "query", required: true, schema: { type: "string", pattern: "^[1-9]\\d{0,17}$" } };
  // The domain is optional where it filters a list, required where it names the subject.
  if (
    name === "domain" &&
    ![
      "inputs",
      "aggregate_by_date",
      "tls_by_date",
      "policy_impact",
      "aggregate_by_source",
      "aggregate_by_unaligned_source",
    ].includes(endpointName)
  )
    return { name, in: "query", required: true, schema: { type: "string" } };
  return [...listParameters, ...dateSeriesParameters, ...sourceFilterParameters].find(
    (parameter) => parameter.name === name,
  );
}

function operation(endpoint: Endpoint) {
  const extra = extraParameters[endpoint.name];
  const parameters =
    endpoint.method === "DELETE"
      ? (extra?.query ?? []).map((name) => ({
          name,
          in: "query",
          required: true,
          schema: { type: "string" },
        }))
      : endpoint.method === "GET"
        ? extra?.query
          ? extra.query.map((name) => queryParameter(endpoint.name, name))
          : listParameters
        : [];
  const body =
    endpoint.method === "POST"
      ? {
          requestBody: {
            required: true,
            description: `One raw report file or mail: aggregate XML, an SMTP TLS report (RFC 8460 JSON), gzip, zip, or a message/rfc822 mail holding aggregate, failure or TLS reports. Any content type; at most MAX_REPORT_BYTES. Or several, as the file parts of a multipart/form-data body (curl -F file=@FILE), each one input, at most ${maxFilesPerUpload}, their bytes together at most MAX_REPORT_BYTES.`,
            content: {
              ...Object.fromEntries(
                [
                  "application/octet-stream",
                  "application/xml",
                  "application/gzip",
                  "application/zip",
                  "message/rfc822",
                ].map((type) => [type, { schema: { type: "string", format: "binary" } }]),
              ),
              "multipart/form-data": {
                schema: {
                  type: "object",
                  properties: {
                    file: {
                      type: "array",
                      items: { type: "string", format: "binary" },
                      maxItems: maxFilesPerUpload,
                    },
                  },
                },
              },
            },
          },
        }
      : endpoint.method === "PUT" && extra?.form
        ? {
            requestBody: {
              required: true,
              content: Object.fromEntries(
                ["application/x-www-form-urlencoded", "application/json"].map((type) => [
                  type,
                  {
                    schema: {
                      type: "object",
                      required: extra.form!.filter(
                        (field) => !optionalFields.has(field) && !optionalIn[endpoint.name]?.includes(field),
                      ),
                      properties: Object.fromEntries(
                        extra.form!.map((field) => [field, formFieldSchemas[field] ?? { type: "string" }]),
                      ),
                    },
                  },
                ]),
              ),
            },
          }
        : {};
  return {
    operationId: endpoint.name.replace(/-/g, "_") + (endpoint.name.includes("-") ? "_hyphen" : ""),
    summary: endpoint.summary,
    security: endpoint.scope === "public" ? [] : [{ bearer: [] }, { session: [] }],
    "x-scope": endpoint.scope,
    parameters,
    ...body,
    responses: {
      [endpoint.method === "POST" ? "202" : "200"]: {
        description: endpoint.method === "POST" ? "Received and stored durably." : "Success.",
        content: {
          "application/json": { schema: { $ref: `#/components/schemas/${schemaName(endpoint.name)}` } },
        },
      },
      ...errorResponses(errorsOf(endpoint)),
    },
  };
}

const schemaName = (endpointName: string) => `Response_${endpointName.replace(/-/g, "_hyphen_")}`;

/** The OpenAPI 3.1 document of this deployment's API, from the endpoint table. */
export function openApiDocument(endpoints: readonly Endpoint[], publicBaseUrl: string, region: string) {
  const paths: Record<string, unknown> = {
    "/": {
      get: {
        operationId: "root",
        summary: "The region and a link to every endpoint.",
        security: [{ bearer: [] }],
        responses: {
          "200": {
            description: "Success.",
            content: { "application/json": { schema: { $ref: "#/components/schemas/Root" } } },
          },
          ...errorResponses(keyedErrors),
        },
      },
    },
    "/openapi.json": {
      get: {
        operationId: "openapi",
        summary: "This document (no key needed).",
        security: [],
        responses: {
          "200": { description: "OpenAPI 3.1 document.", content: { "application/json": {} } },
          ...errorResponses(["500"]),
        },
      },
    },
    ...operationsPaths(new URL(publicBaseUrl).origin),
  };
  for (const endpoint of endpoints) {
    paths[`/${endpoint.name}`] = { [endpoint.method.toLowerCase()]: operation(endpoint) };
  }
  const schemas: Record<string, unknown> = { Error: errorSchema, Root: rootSchema };
  for (const endpoint of endpoints) schemas[schemaName(endpoint.name)] = responseSchemas[endpoint.name];
  // Each event type's envelope and data, generated from the catalogue's types (event-feed).
  Object.assign(schemas, feedEventComponents());
  return {
    openapi: "3.1.0",
    info: {
      title: "dmarc-ledger reporting API",
      version: "1.0.0",
      description: `DMARC aggregate and failure reports, domains and Safe SPF. Region: ${region}.`,
    },
    servers: [{ url: publicBaseUrl.replace(/\/$/, "") }],
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "An API key: dlk_<region>_…" },
        session: {
          type: "apiKey",
          in: "cookie",
          name: "dl_session",
          description:
            "The dashboard's session (PUT sign_in); __Host-dl_session behind https. Writes also need the X-CSRF-Token header that GET session answers.",
        },
      },
      schemas,
    },
    paths,
  };
}

/** /healthz, /readyz and /metrics: at the origin, outside /api, and without a key. */
function operationsPaths(origin: string) {
  const servers = [{ url: origin }];
  const statusBody = (description: string) => ({
    description,
    content: {
      "application/json": {
        schema: {
          type: "object",
          required: ["status"],
          properties: { status: { type: "string" }, reason: { type: "string" } },
        },
      },
    },
  });
  return {
    "/healthz": {
      servers,
      get: {
        operationId: "healthz",
        summary: "Whether the process answers (liveness).",
        security: [],
        responses: { "200": statusBody('{"status":"ok"}') },
      },
    },
    "/readyz": {
      servers,
      get: {
        operationId: "readyz",
        summary: "Whether the database and event store answer and the projections are within READY_MAX_LAG.",
        security: [],
        responses: {
          "200": statusBody('{"status":"ready"}'),
          "503": statusBody('{"status":"not_ready","reason":…}'),
        },
      },
    },
    "/metrics": {
      servers,
      get: {
        operationId: "metrics",
        summary: "Prometheus metrics (text exposition format).",
        security: [],
        responses: { "200": { description: "Metrics.", content: { "text/plain": {} } } },
      },
    },
  };
}
