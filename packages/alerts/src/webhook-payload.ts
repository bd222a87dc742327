import type { AlertRaised } from "@dmarc-ledger/events";

/**
 * The body of an alert's webhook, in the Standard Webhooks shape: `type`, `timestamp` (when the
 * alert was raised, the same on every attempt) and `data` (the AlertRaised payload).
 */
export function webhookBody(alert: AlertRaised, raisedAt: Date): string {
  return JSON.stringify({ type: `alert.${alert.rule}`, timestamp: raisedAt.toISOString(), data: alert });
}

/** What an endpoint that lists the rules it wants receives; an empty list means every rule. */
export function endpointWants(alertTypes: readonly string[], rule: string): boolean {
  return alertTypes.length === 0 || alertTypes.includes(rule);
}
