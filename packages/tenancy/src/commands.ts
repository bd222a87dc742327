import { randomUUID } from "node:crypto";
import { normaliseDomain, registrableDomain, sameBranch } from "@dmarc-ledger/domain-names";
import { type EventStore, WrongExpectedVersionError } from "@dmarc-ledger/event-store";
import { type EventMetadata, newEvent, type Region, type Scope, streams } from "@dmarc-ledger/events";
import { allScopes, generateApiKey } from "./api-keys.js";
import { activeClaims, currentOwner } from "./domain-owner.js";
import { DomainNotFoundError } from "./domain-ownership.js";
import { readTenant, UnknownApiKeyError, UnknownTenantError } from "./tenant-history.js";

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

/** Revokes a key of the tenant; an unknown tenant or key is an error, a revoked key stays so. */
export async function revokeApiKey(
  store: EventStore,
  input: { tenantId: string; keyId: string },
  metadata: EventMetadata,
): Promise<{ status: "revoked"; position: bigint } | { status: "already_revoked" }> {
  const tenant = await readTenant(store, input.tenantId);
  const key = tenant.keys.get(input.keyId);
  if (!key) throw new UnknownApiKeyError(`Tenant ${input.tenantId} has no API key ${input.keyId}.`);
  if (key.revokedAt !== null) return { status: "already_revoked" };
  const result = await store.append(
    streams.tenant(input.tenantId),
    [newEvent("ApiKeyRevoked", input, metadata)],
    tenant.revision,
  );
  return { status: "revoked", position: result.position };
}

export class DomainOwnedElsewhereError extends Error {
  override readonly name: string = "DomainOwnedElsewhereError";
}

/** A parent or a subdomain of the domain belongs to another tenant: a domain tree has one owner. */
export class DomainTreeTakenError extends DomainOwnedElsewhereError {
  override readonly name: string = "DomainTreeTakenError";
}

export type AddDomainOutcome =
  | { status: "added"; domain: string; position: bigint }
  | { status: "already_yours"; domain: string };

/**
 * Claims can race; each lost race re-reads the tree and decides again, after a short random
 * pause growing with the attempts, so that many adds under one registrable domain at once (a
 * customer adding its subdomains in parallel) spread out instead of colliding again in step.
 */
const maxClaimAttempts = 50;

const backOff = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(100, 2 * (attempt + 1))));

/**
 * Adds a domain to a tenant, in two appends:
 *
 * 1. The claim, on the stream of the domain's registrable domain (`registrable-domain-<name>`),
 *    with the revision read: refused when another tenant claimed the domain, a parent or a
 *    subdomain of it. Two tenants claiming a parent and a child at the same moment append at the
 *    same revision; one fails, reads the other's claim and is refused.
 * 2. DomainAdded on the domain's own stream, with the revision at which it had no owner ("no
 *    stream" the first time; after a DomainRemoved, that event's revision).
 *
 * A crash between the two leaves the claim: the same tenant adding the domain again finishes it.
 * The tenant must exist: a domain claimed for no one would be blocked for every real tenant.
 */
export async function addDomain(
  store: EventStore,
  input: { tenantId: string; domain: string },
  metadata: EventMetadata,
): Promise<AddDomainOutcome> {
  const domain = normaliseDomain(input.domain);
  await readTenant(store, input.tenantId);
  await claimInTree(store, input.tenantId, domain, metadata);
  for (let attempt = 0; attempt < maxClaimAttempts; attempt++) {
    const history = await store.readStream(streams.domain(domain));
    const owner = currentOwner(history);
    if (owner === input.tenantId) return { status: "already_yours", domain };
    if (owner !== null)
      throw new DomainOwnedElsewhereError(`The domain ${domain} belongs to another account.`);
    try {
      const result = await store.append(
        streams.domain(domain),
        [newEvent("DomainAdded", { domain, tenantId: input.tenantId }, metadata)],
        history.length === 0 ? "no_stream" : history.at(-1)!.revision,
      );
      return { status: "added", domain, position: result.position };
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError)) throw error;
      await backOff(attempt);
    }
  }
  throw new Error(`Could not add ${domain}: its stream kept changing.`);
}

/**
 * Takes a domain off a tenant: DomainRemoved on its stream (its reports stop counting for the
 * tenant; the audit trail keeps everything), then the claim in its tree is released, so that any
 * tenant may add it again. A crash between the two leaves the claim; removing again releases it.
 */
export async function removeDomain(
  store: EventStore,
  input: { tenantId: string; domain: string },
  metadata: EventMetadata,
): Promise<{ domain: string; position: bigint }> {
  const domain = normaliseDomain(input.domain);
  await readTenant(store, input.tenantId);
  const history = await store.readStream(streams.domain(domain));
  const owner = currentOwner(history);
  const removedBefore = owner === null && history.some((event) => event.type === "DomainAdded");
  if (owner !== input.tenantId && !removedBefore) {
    throw new DomainNotFoundError(`${domain} is not one of tenant ${input.tenantId}'s domains.`);
  }
  let position: bigint | null = null;
  if (owner === input.tenantId) {
    const result = await store.append(
      streams.domain(domain),
      [newEvent("DomainRemoved", { domain, tenantId: input.tenantId }, metadata)],
      history.at(-1)!.revision,
    );
    position = result.position;
  }
  const released = await releaseClaim(store, input.tenantId, domain, metadata);
  if (position === null && released === null) {
    throw new DomainNotFoundError(`${domain} is not one of tenant ${input.tenantId}'s domains.`);
  }
  return { domain, position: (position ?? released)! };
}

/**
 * Claims, in its tree, a domain a tenant already has: one added before the tree rule existed
 * (its DomainAdded has no DomainReserved). "conflict" when another tenant holds the same domain,
 * a parent or a subdomain of it: two tenants were given one tree before the rule, and an operator
 * must remove the domain from one of them (nothing here decides whose it is).
 */
export async function claimExistingDomain(
  store: EventStore,
  input: { tenantId: string; domain: string },
  metadata: EventMetadata,
): Promise<"claimed" | "conflict"> {
  const domain = normaliseDomain(input.domain);
  try {
    await claimInTree(store, input.tenantId, domain, metadata);
    return "claimed";
  } catch (error) {
    if (error instanceof DomainOwnedElsewhereError) return "conflict";
    throw error;
  }
}

async function releaseClaim(
  store: EventStore,
  tenantId: string,
  domain: string,
  metadata: EventMetadata,
): Promise<bigint | null> {
  const registrable = registrableDomain(domain);
  const stream = streams.registrableDomain(registrable);
  for (let attempt = 0; attempt < maxClaimAttempts; attempt++) {
    const history = await store.readStream(stream);
    if (activeClaims(history).get(domain) !== tenantId) return null;
    try {
      const result = await store.append(
        stream,
        [newEvent("DomainReleased", { domain, tenantId, registrableDomain: registrable }, metadata)],
        history.at(-1)!.revision,
      );
      return result.position;
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError)) throw error;
      await backOff(attempt);
    }
  }
  throw new Error(`Could not release ${domain}: its domain tree kept changing.`);
}

async function claimInTree(
  store: EventStore,
  tenantId: string,
  domain: string,
  metadata: EventMetadata,
): Promise<void> {
  const registrable = registrableDomain(domain);
  const stream = streams.registrableDomain(registrable);
  for (let attempt = 0; attempt < maxClaimAttempts; attempt++) {
    const history = await store.readStream(stream);
    const claims = activeClaims(history);
    const exact = claims.get(domain);
    if (exact !== undefined) {
      if (exact === tenantId) return;
      throw new DomainOwnedElsewhereError(`The domain ${domain} belongs to another account.`);
    }
    // Which domain and whose it is stay unsaid: tenants learn nothing of each other.
    if ([...claims].some(([claimed, owner]) => owner !== tenantId && sameBranch(claimed, domain))) {
      throw new DomainTreeTakenError(
        `A parent or a subdomain of ${domain} belongs to another account; a domain tree has one owner.`,
      );
    }
    try {
      await store.append(
        stream,
        [newEvent("DomainReserved", { domain, tenantId, registrableDomain: registrable }, metadata)],
        history.length === 0 ? "no_stream" : history.at(-1)!.revision,
      );
      return;
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError)) throw error;
      await backOff(attempt);
    }
  }
  throw new Error(`Could not claim ${domain}: its domain tree kept changing.`);
}
