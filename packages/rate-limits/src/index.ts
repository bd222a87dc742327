export { rateLimitMigrations } from "./migrations/index.js";
export {
  processRateLimiter,
  type RateLimitDecision,
  type RateLimiter,
  type RateLimitOptions,
  sharedRateLimiter,
} from "./rate-limiter.js";
