import type { Endpoint } from "./endpoints.js";
import { errorSchema, responseSchemas, rootSchema } from "./openapi-schemas.js";

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
};

const errorStatuses: Record<string, string> = {
  "400": "Invalid parameter or body.",
  "401": "Missing or unknown API key.",
  "403": "The key lacks the scope.",
  "404": "Unknown path or domain.",
  "405": "Wrong method.",
  "409": "Conflict (the domain belongs to another account).",
  "413": "Body too large.",
  "415": "Unsupported media type.",
  "421": "The key belongs to the other region.",
  "422": "Invalid SPF record.",
  "429": "Rate limited.",
  "500": "Internal error (quote the request id).",
  "503": "Not ready (the message says what is missing).",
};

function errorResponses() {
  return Object.fromEntries(
    Object.entries(errorStatuses).map(([status, description]) => [
      status,
      { description, content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
    ]),
  );
}

function operation(endpoint: Endpoint) {
  const extra = extraParameters[endpoint.name];
  const parameters =
    endpoint.method === "GET"
      ? extra?.query
        ? extra.query.map((name) =>
            name === "domain"
              ? { name, in: "query", required: true, schema: { type: "string" } }
              : listParameters.find((parameter) => parameter.name === name),
          )
        : listParameters
      : [];
  const body =
    endpoint.method === "PUT" && extra?.form
      ? {
          requestBody: {
            required: true,
            content: Object.fromEntries(
              ["application/x-www-form-urlencoded", "application/json"].map((type) => [
                type,
                {
                  schema: {
                    type: "object",
                    required: extra.form!.filter((field) => field !== "group"),
                    properties: Object.fromEntries(extra.form!.map((field) => [field, { type: "string" }])),
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
    security: [{ bearer: [] }],
    "x-scope": endpoint.scope,
    parameters,
    ...body,
    responses: {
      "200": {
        description: "Success.",
        content: {
          "application/json": { schema: { $ref: `#/components/schemas/${schemaName(endpoint.name)}` } },
        },
      },
      ...errorResponses(),
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
          ...errorResponses(),
        },
      },
    },
    "/openapi.json": {
      get: {
        operationId: "openapi",
        summary: "This document.",
        security: [{ bearer: [] }],
        responses: { "200": { description: "OpenAPI 3.1 document.", content: { "application/json": {} } } },
      },
    },
  };
  for (const endpoint of endpoints) {
    paths[`/${endpoint.name}`] = { [endpoint.method.toLowerCase()]: operation(endpoint) };
  }
  const schemas: Record<string, unknown> = { Error: errorSchema, Root: rootSchema };
  for (const endpoint of endpoints) schemas[schemaName(endpoint.name)] = responseSchemas[endpoint.name];
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
      },
      schemas,
    },
    paths,
  };
}
