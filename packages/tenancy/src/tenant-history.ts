import type { EventStore } from "@dmarc-ledger/event-store";
import {
  type ApiKeyIssued,
  type Region,
  type Scope,
  streams,
  type TenantCreated,
} from "@dmarc-ledger/events";

export class UnknownTenantError extends Error {
  override readonly name = "UnknownTenantError";
}

export class UnknownApiKeyError extends Error {
  override readonly name = "UnknownApiKeyError";
}

export interface TenantState {
  tenantId: string;
  name: string;
  region: Region;
  createdAt: Date;
  keys: Map<string, { keyPrefix: string; scopes: Scope[]; createdAt: Date; revokedAt: Date | null }>;
  /** For an optimistic append to the tenant's stream. */
  revision: bigint;
}

/**
 * A tenant as its own stream says (not a read model, which may lag): commands check against it
 * that the tenant and its keys exist before they append anything.
 */
export async function readTenant(store: EventStore, tenantId: string): Promise<TenantState> {
  const history = await store.readStream(streams.tenant(tenantId));
  const created = history[0];
  if (created?.type !== "TenantCreated") throw new UnknownTenantError(`There is no tenant ${tenantId}.`);
  const { name, region } = created.data as TenantCreated;
  const keys: TenantState["keys"] = new Map();
  for (const event of history) {
    if (event.type === "ApiKeyIssued") {
      const issued = event.data as ApiKeyIssued;
      keys.set(issued.keyId, {
        keyPrefix: issued.keyPrefix,
        scopes: issued.scopes,
        createdAt: event.recordedAt,
        revokedAt: null,
      });
    } else if (event.type === "ApiKeyRevoked") {
      const key = keys.get((event.data as { keyId: string }).keyId);
      if (key) key.revokedAt = event.recordedAt;
    }
  }
  return { tenantId, name, region, createdAt: created.recordedAt, keys, revision: history.at(-1)!.revision };
}
