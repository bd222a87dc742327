export { ApiError } from "./api-error.js";
export { createApiApp, endpoints } from "./app.js";
export { type ApiConfig, apiConfigFromEnv } from "./config.js";
export type { Endpoint } from "./endpoints.js";
export { openApiDocument } from "./openapi.js";
export { responseSchemas } from "./openapi-schemas.js";
export type { ApiDeps, ApiState } from "./state.js";
