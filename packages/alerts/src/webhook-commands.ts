import { randomBytes } from "node:crypto";
import { type EventStore, WrongExpectedVersionError } from "@dmarc-ledger/event-store";
import { type AlertRuleKind, type EventMetadata, newEvent, streams } from "@dmarc-ledger/events";
import type { DataKeys } from "@dmarc-ledger/personal-data";
import type { Kysely } from "kysely";
import { checkEndpointToAdd } from "./address-guard.js";
import { raise } from "./alert-evaluator.js";
import { countEndpoints } from "./queries.js";
import { isRuleKind } from "./rules.js";
import type { AlertsSchema } from "./schema.js";
import { defaultEndpointLimits } from "./settings.js";
import { maskedUrl } from "./url-mask.js";
import { storeWebhookSecret } from "./webhook-secrets.js";

export class InvalidEndpointError extends Error {
  override readonly name = "InvalidEndpointError";
}

export class UnknownEndpointError extends Error {
  override readonly name = "UnknownEndpointError";
}

export interface EndpointInput {
  url: string;
  alertTypes?: readonly string[];
  description?: string;
}

const maxDescription = 200;

/** What an endpoint may be (WEBHOOK_ALLOW_PRIVATE_ADDRESSES, WEBHOOK_MAX_ENDPOINTS, WEBHOOK_MAX_URL_LENGTH). */
export interface EndpointPolicy {
  allowPrivate: boolean;
  maxEndpoints?: number;
  maxUrlLength?: number;
}

/** Checks an endpoint's fields; `keptUrl` is one already checked (a change that keeps the URL). */
async function checkInput(
  input: EndpointInput,
  policy: EndpointPolicy,
  keptUrl?: string,
): Promise<{ url: string; alertTypes: AlertRuleKind[]; description: string }> {
  const problems: string[] = [];
  let url = input.url;
  const maxUrlLength = policy.maxUrlLength ?? defaultEndpointLimits.maxUrlLength;
  if (input.url === keptUrl) {
    // Checked when it was set: an endpoint whose name stopped resolving can still be switched off.
  } else if (input.url.length > maxUrlLength) {
    problems.push(`url: at most ${maxUrlLength} characters`);
  } else {
    try {
      url = (await checkEndpointToAdd(input.url, policy.allowPrivate)).toString();
    } catch (error) {
      problems.push(`url: ${(error as Error).message}`);
    }
    // Normalising (punycode, percent-encoding) may lengthen it past the cap.
    if (url.length > maxUrlLength) problems.push(`url: at most ${maxUrlLength} characters`);
  }
  const alertTypes = [...new Set(input.alertTypes ?? [])];
  const unknown = alertTypes.filter((type) => !isRuleKind(type));
  if (unknown.length > 0) problems.push(`alert_types: not rules: ${unknown.join(", ")}`);
  const description = (input.description ?? "").trim();
  if (description.length > maxDescription || /[\u0000-\u001f]/.test(description)) {
    problems.push(`description: at most ${maxDescription} printable characters`);
  }
  if (problems.length > 0) throw new InvalidEndpointError(problems.join("; "));
  return { url, alertTypes: alertTypes as AlertRuleKind[], description };
}

/**
 * Adds a webhook endpoint. Its signing secret is made here and returned once: it is kept in
 * webhook_secret (not in an event: events are never erased), sealed under a data key the master
 * key wraps (webhook-secrets.ts), and never shown or logged again.
 */
export async function addEndpoint(
  store: EventStore,
  db: Kysely<AlertsSchema>,
  input: EndpointInput & { tenantId: string },
  metadata: EventMetadata,
  options: EndpointPolicy & { keys: DataKeys },
): Promise<{ endpointId: string; secret: string; position: bigint }> {
  const checked = await checkInput(input, options);
  const maxEndpoints = options.maxEndpoints ?? defaultEndpointLimits.maxEndpoints;
  const count = await countEndpoints(db, input.tenantId);
  if (count >= maxEndpoints) {
    throw new InvalidEndpointError(
      `this account has ${count} webhook endpoints, the most allowed (WEBHOOK_MAX_ENDPOINTS)`,
    );
  }
  const endpointId = `whep_${randomBytes(12).toString("hex")}`;
  const secret = `whsec_${randomBytes(32).toString("base64")}`;
  // The secret first: a delivery never finds an endpoint without one.
  await storeWebhookSecret(db, options.keys, endpointId, secret);
  const result = await store.append(
    streams.webhook(endpointId),
    [newEvent("WebhookEndpointAdded", { tenantId: input.tenantId, endpointId, ...checked }, metadata)],
    "no_stream",
  );
  return { endpointId, secret, position: result.position };
}

interface EndpointState {
  tenantId: string;
  url: string;
  alertTypes: AlertRuleKind[];
  description: string;
  enabled: boolean;
  /** Paused by the service (WebhookEndpointPaused) and not resumed since. */
  paused: boolean;
  revision: bigint;
}

/** An endpoint as its stream says; UnknownEndpointError when it is not the tenant's. */
async function endpointState(
  store: EventStore,
  tenantId: string,
  endpointId: string,
): Promise<EndpointState> {
  const events = await store.readStream(streams.webhook(endpointId));
  let state = null as EndpointState | null;
  for (const event of events) {
    const data = event.data as Record<string, unknown>;
    if (event.type === "WebhookEndpointAdded" || event.type === "WebhookEndpointChanged") {
      state = {
        tenantId: data.tenantId as string,
        url: data.url as string,
        alertTypes: data.alertTypes as AlertRuleKind[],
        description: data.description as string,
        enabled: event.type === "WebhookEndpointAdded" ? true : (data.enabled as boolean),
        paused: state?.paused ?? false,
        revision: event.revision,
      };
    } else if (event.type === "WebhookEndpointDisabled" && state) {
      state = { ...(state as EndpointState), enabled: false, revision: event.revision };
    } else if (event.type === "WebhookEndpointPaused" && state) {
      state = { ...(state as EndpointState), paused: true, revision: event.revision };
    } else if (event.type === "WebhookEndpointResumed" && state) {
      state = { ...(state as EndpointState), paused: false, revision: event.revision };
    }
  }
  if (!state || state.tenantId !== tenantId)
    throw new UnknownEndpointError(`no webhook endpoint ${endpointId}`);
  return state;
}

/**
 * Changes an endpoint (what is not given stays); `enabled: true` turns a disabled one on again and
 * resumes a paused one (WebhookEndpointResumed): then call sendKeptDeliveries so that what it kept
 * goes at once rather than at each delivery's next retry.
 */
export async function changeEndpoint(
  store: EventStore,
  input: Partial<EndpointInput> & { tenantId: string; endpointId: string; enabled?: boolean },
  metadata: EventMetadata,
  options: EndpointPolicy,
): Promise<bigint | null> {
  const current = await endpointState(store, input.tenantId, input.endpointId);
  const checked = await checkInput(
    {
      url: input.url ?? current.url,
      alertTypes: input.alertTypes ?? current.alertTypes,
      description: input.description ?? current.description,
    },
    options,
    current.url,
  );
  const enabled = input.enabled ?? current.enabled;
  const resuming = current.paused && input.enabled === true;
  const changed = !(
    checked.url === current.url &&
    JSON.stringify(checked.alertTypes) === JSON.stringify(current.alertTypes) &&
    checked.description === current.description &&
    enabled === current.enabled
  );
  if (!changed && !resuming) return null;
  const { tenantId, endpointId } = input;
  const result = await store.append(
    streams.webhook(endpointId),
    [
      ...(changed
        ? [newEvent("WebhookEndpointChanged", { tenantId, endpointId, ...checked, enabled }, metadata)]
        : []),
      ...(resuming ? [newEvent("WebhookEndpointResumed", { tenantId, endpointId }, metadata)] : []),
    ],
    current.revision,
  );
  return result.position;
}

/**
 * Makes an endpoint's pending deliveries due now, and its queue no longer wait out a backoff: what
 * a paused endpoint kept goes as soon as it is resumed.
 */
export async function sendKeptDeliveries(db: Kysely<AlertsSchema>, endpointId: string): Promise<void> {
  const now = new Date();
  await db
    .updateTable("webhook_delivery")
    .set({ next_attempt_at: now, first_attempt_at: null })
    .where("endpoint_id", "=", endpointId)
    .where("status", "=", "pending")
    .execute();
  await db
    .updateTable("webhook_endpoint_health")
    .set({ retry_at: null })
    .where("endpoint_id", "=", endpointId)
    .execute();
}

/**
 * Pauses an endpoint that has failed for too long: its pending deliveries are kept (not sent) until
 * it is resumed by hand, and the tenant's admins are told by mail (a webhook_disabled alert, whose
 * mail goes to admins only: publisher.ts). Returns the event's position, or null when it is already
 * paused or disabled, or another process paused it first.
 */
export async function pauseEndpoint(
  store: EventStore,
  db: Kysely<AlertsSchema>,
  input: {
    tenantId: string;
    endpointId: string;
    reason: string;
    failingSince: Date;
    lastSuccessAt: Date | null;
  },
  metadata: EventMetadata,
  now: Date = new Date(),
): Promise<bigint | null> {
  const current = await endpointState(store, input.tenantId, input.endpointId);
  if (current.paused || !current.enabled) return null;
  const failingSince = input.failingSince.toISOString();
  const lastSuccessAt = input.lastSuccessAt?.toISOString() ?? null;
  let result: Awaited<ReturnType<EventStore["append"]>>;
  try {
    result = await store.append(
      streams.webhook(input.endpointId),
      [
        newEvent(
          "WebhookEndpointPaused",
          {
            tenantId: input.tenantId,
            endpointId: input.endpointId,
            reason: input.reason,
            failingSince,
            lastSuccessAt,
          },
          metadata,
        ),
      ],
      current.revision,
    );
  } catch (error) {
    if (error instanceof WrongExpectedVersionError) return null;
    throw error;
  }
  const url = maskedUrl(current.url);
  await raise(
    db,
    {
      tenantId: input.tenantId,
      rule: "webhook_disabled",
      domain: null,
      key: `endpoint:${input.endpointId}:paused:${result.nextRevision}`,
      period: { start: now.toISOString(), end: now.toISOString() },
      // The URL masked: alerts are shown to viewers and mailed, and a URL may carry a token.
      summary: `The webhook endpoint ${url} is paused: ${input.reason}. Its deliveries are kept until it is resumed.`,
      figures: { endpointId: input.endpointId, url, reason: input.reason, failingSince, lastSuccessAt },
      causedBy: [{ stream: streams.webhook(input.endpointId), position: result.position.toString() }],
    },
    now,
  );
  return result.position;
}

/**
 * Sends a delivery again, with the same webhook-id and body, as a new series of retries. Throws
 * UnknownEndpointError when the delivery is not the tenant's; InvalidEndpointError while its
 * endpoint is disabled.
 */
export async function redeliver(
  db: Kysely<AlertsSchema>,
  input: { tenantId: string; deliveryId: string },
): Promise<void> {
  const delivery = await db
    .selectFrom("webhook_delivery as d")
    .innerJoin("webhook_endpoint as e", "e.endpoint_id", "d.endpoint_id")
    .select(["d.delivery_id", "e.enabled"])
    .where("d.delivery_id", "=", input.deliveryId)
    .where("d.tenant_id", "=", input.tenantId)
    .executeTakeFirst();
  if (!delivery) throw new UnknownEndpointError(`no delivery ${input.deliveryId}`);
  if (!delivery.enabled) throw new InvalidEndpointError("its endpoint is disabled: enable it first");
  await db
    .updateTable("webhook_delivery")
    .set({ status: "pending", next_attempt_at: new Date(), first_attempt_at: null, lease_until: null })
    .where("delivery_id", "=", input.deliveryId)
    .execute();
}
