export { ApiError } from "./api-error.js";
export { createApiApp, endpoints } from "./app.js";
export { type ApiConfig, apiConfigFrom, apiConfigFromEnv, dashboardUrlFromEnv } from "./config.js";
export { builtDashboard } from "./dashboard-root.js";
export type { Endpoint } from "./endpoints.js";
export { type BoundServer, bindPort, PortUnavailableError } from "./listen.js";
export {
  countingAppends,
  createServiceMetrics,
  type ServiceMetrics,
} from "./observability/metrics.js";
export { openApiDocument } from "./openapi.js";
export { responseSchemas } from "./openapi-schemas.js";
export { type ApiSettings, apiSettings } from "./settings.js";
export { type ApiAppOptions, startApiApp } from "./start-api-app.js";
export type { ApiDeps, ApiState } from "./state.js";
