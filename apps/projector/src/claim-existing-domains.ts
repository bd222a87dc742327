import type { Runtime } from "@dmarc-ledger/runtime";
import { claimExistingDomain, listUnclaimedDomains } from "@dmarc-ledger/tenancy";
import type { Logger } from "pino";

export interface ExistingDomainClaims {
  claimed: string[];
  /** Domains whose tree another tenant holds too (both were added before the tree rule). */
  conflicts: { domain: string; tenantId: string }[];
  /** Domains that could not be claimed (e.g. no longer a valid name under today's rules). */
  failed: { domain: string; tenantId: string; reason: string }[];
}

/**
 * Gives the domains added before the tree rule (a domain tree has one owner) their claim, so that
 * the rule holds for them too: without it another tenant could still add their parent or a
 * subdomain. Runs on caught-up read models; finds nothing to do once every domain is claimed.
 */
export async function claimExistingDomains(
  runtime: Pick<Runtime, "store" | "db">,
  logger: Logger,
): Promise<ExistingDomainClaims> {
  const outcome: ExistingDomainClaims = { claimed: [], conflicts: [], failed: [] };
  for (const owned of await listUnclaimedDomains(runtime.db)) {
    try {
      const claim = await claimExistingDomain(runtime.store, owned, { causedBy: "process:projector" });
      if (claim === "claimed") outcome.claimed.push(owned.domain);
      else outcome.conflicts.push(owned);
    } catch (error) {
      // One domain the rules of today refuse must not keep the others unclaimed.
      const reason = error instanceof Error ? error.message : String(error);
      outcome.failed.push({ ...owned, reason });
      logger.warn(
        { ...owned, reason },
        "could not claim the tree of a domain added before the one-owner rule",
      );
    }
  }
  if (outcome.claimed.length > 0) {
    logger.info(
      { domains: outcome.claimed.length },
      "claimed the domain trees of domains added before the one-owner rule",
    );
  }
  for (const conflict of outcome.conflicts) {
    // The operator's log may name tenants; the API never does.
    logger.warn(
      conflict,
      "this domain and another tenant's parent or subdomain of it were both added before the one-owner rule: their reports count for both tenants; remove it from one (dmarc-ledger domain remove)",
    );
  }
  return outcome;
}
