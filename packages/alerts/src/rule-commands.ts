import type { EventStore } from "@dmarc-ledger/event-store";
import { type EventMetadata, newEvent, streams } from "@dmarc-ledger/events";
import { InvalidRuleError, isRuleKind, validateParams } from "./rules.js";

/** Sets one of a tenant's rules: on or off, and its parameters (the ones not named take their default). */
export async function setAlertRule(
  store: EventStore,
  input: { tenantId: string; rule: string; enabled: boolean; params?: Record<string, unknown> },
  metadata: EventMetadata,
): Promise<bigint> {
  if (!isRuleKind(input.rule)) throw new InvalidRuleError(`no rule "${input.rule}"`);
  const params = validateParams(input.rule, input.params ?? {});
  const result = await store.append(
    streams.alertRules(input.tenantId),
    [
      newEvent(
        "AlertRuleSet",
        { tenantId: input.tenantId, rule: input.rule, enabled: input.enabled, params },
        metadata,
      ),
    ],
    "any",
  );
  return result.position;
}
