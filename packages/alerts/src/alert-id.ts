import { createHash } from "node:crypto";

/**
 * An alert's id: the same tenant, rule, domain and period (or thing: a source IP, a report) give
 * the same id, so an alert decided twice (a batch seen again after a crash, the no-report check
 * run twice) is one alert. It is also the webhook-id of its deliveries.
 */
export function alertIdOf(tenantId: string, rule: string, domain: string | null, key: string): string {
  const digest = createHash("sha256")
    .update(JSON.stringify([tenantId, rule, domain, key]))
    .digest("hex");
  return `alrt_${digest.slice(0, 32)}`;
}
