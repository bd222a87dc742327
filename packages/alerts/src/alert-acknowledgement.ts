import { type EventStore, WrongExpectedVersionError } from "@dmarc-ledger/event-store";
import { type EventMetadata, newEvent, streams } from "@dmarc-ledger/events";

export class UnknownAlertError extends Error {
  override readonly name = "UnknownAlertError";
}

/**
 * Acknowledges one of a tenant's alerts: an AlertAcknowledged on the alert's own stream. The
 * stream decides, not the read model: an alert of another tenant (or none) is UnknownAlertError,
 * and one acknowledged already stays as it was (null: nothing appended).
 */
export async function acknowledgeAlert(
  store: EventStore,
  input: { tenantId: string; alertId: string; by: string },
  metadata: EventMetadata,
): Promise<bigint | null> {
  try {
    return await appendAcknowledgement(store, input, metadata);
  } catch (error) {
    // Two people acknowledging at once: the second reads the first's and appends nothing.
    if (!(error instanceof WrongExpectedVersionError)) throw error;
    return await appendAcknowledgement(store, input, metadata);
  }
}

async function appendAcknowledgement(
  store: EventStore,
  input: { tenantId: string; alertId: string; by: string },
  metadata: EventMetadata,
): Promise<bigint | null> {
  const stream = streams.alert(input.alertId);
  const events = await store.readStream(stream);
  const raised = events.find((event) => event.type === "AlertRaised");
  if (!raised || (raised.data as { tenantId?: unknown }).tenantId !== input.tenantId) {
    throw new UnknownAlertError(`no alert ${input.alertId}`);
  }
  if (events.some((event) => event.type === "AlertAcknowledged")) return null;
  const acknowledged = newEvent(
    "AlertAcknowledged",
    { tenantId: input.tenantId, alertId: input.alertId, by: input.by },
    metadata,
  );
  const result = await store.append(stream, [acknowledged], events.at(-1)!.revision);
  return result.position;
}
