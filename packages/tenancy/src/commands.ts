import { randomUUID } from "node:crypto";
import { normaliseDomain } from "@dmarc-ledger/domain-names";
import { type EventStore, WrongExpectedVersionError } from "@dmarc-ledger/event-store";
import {
  type DomainAdded,
  type EventMetadata,
  newEvent,
  type Region,
  type Scope,
  streams,
} from "@dmarc-ledger/events";
import { allScopes, generateApiKey } from "./api-keys.js";

export interface CreatedTenant {
  tenantId: string;
  apiKey: string;
  keyId: string;
  position: bigint;
}

/** Creates a tenant with a first key holding every scope. The key is returned once, never stored. */
export async function createTenant(
  store: EventStore,
  input: { name: string; region: Region },
  metadata: EventMetadata,
): Promise<CreatedTenant> {
  const tenantId = randomUUID();
  const issued = generateApiKey(input.region);
  const result = await store.append(
    streams.tenant(tenantId),
    [
      newEvent("TenantCreated", { tenantId, name: input.name, region: input.region }, metadata),
      newEvent(
        "ApiKeyIssued",
        {
          tenantId,
          keyId: issued.keyId,
          keyHash: issued.keyHash,
          keyPrefix: issued.keyPrefix,
          scopes: [...allScopes],
          region: input.region,
        },
        metadata,
      ),
    ],
    "no_stream",
  );
  return { tenantId, apiKey: issued.key, keyId: issued.keyId, position: result.position };
}

export class UnknownTenantError extends Error {
  override readonly name = "UnknownTenantError";
}

export async function issueApiKey(
  store: EventStore,
  input: { tenantId: string; scopes: Scope[] },
  metadata: EventMetadata,
): Promise<{ apiKey: string; keyId: string; position: bigint }> {
  const history = await store.readStream(streams.tenant(input.tenantId), { limit: 1 });
  const created = history[0];
  if (created?.type !== "TenantCreated") throw new UnknownTenantError(`No tenant ${input.tenantId}.`);
  const region = (created.data as { region: Region }).region;
  const issued = generateApiKey(region);
  const result = await store.append(
    streams.tenant(input.tenantId),
    [
      newEvent(
        "ApiKeyIssued",
        {
          tenantId: input.tenantId,
          keyId: issued.keyId,
          keyHash: issued.keyHash,
          keyPrefix: issued.keyPrefix,
          scopes: input.scopes,
          region,
        },
        metadata,
      ),
    ],
    "stream_exists",
  );
  return { apiKey: issued.key, keyId: issued.keyId, position: result.position };
}

export async function revokeApiKey(
  store: EventStore,
  input: { tenantId: string; keyId: string },
  metadata: EventMetadata,
): Promise<bigint> {
  const result = await store.append(
    streams.tenant(input.tenantId),
    [newEvent("ApiKeyRevoked", input, metadata)],
    "stream_exists",
  );
  return result.position;
}

export class DomainOwnedElsewhereError extends Error {
  override readonly name = "DomainOwnedElsewhereError";
}

export type AddDomainOutcome =
  | { status: "added"; domain: string; position: bigint }
  | { status: "already_yours"; domain: string };

/**
 * Adds a domain to a tenant. The domain's stream is created with "no stream" expected, so that its
 * existence is the uniqueness check within the region, even under concurrent requests.
 */
export async function addDomain(
  store: EventStore,
  input: { tenantId: string; domain: string },
  metadata: EventMetadata,
): Promise<AddDomainOutcome> {
  const domain = normaliseDomain(input.domain);
  try {
    const result = await store.append(
      streams.domain(domain),
      [newEvent("DomainAdded", { domain, tenantId: input.tenantId }, metadata)],
      "no_stream",
    );
    return { status: "added", domain, position: result.position };
  } catch (error) {
    if (!(error instanceof WrongExpectedVersionError)) throw error;
    const [first] = await store.readStream(streams.domain(domain), { limit: 1 });
    if ((first?.data as DomainAdded | undefined)?.tenantId === input.tenantId) {
      return { status: "already_yours", domain };
    }
    throw new DomainOwnedElsewhereError(`The domain ${domain} belongs to another account.`);
  }
}
