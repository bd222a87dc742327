import { getServers } from "node:dns";
import { createResolver } from "@dmarc-ledger/safe-spf";
import { checkDomainStatus, type DomainStatus } from "./domain-status.js";
import type { OnboardingSettings } from "./settings.js";

export type DomainStatusChecker = (domain: string) => Promise<DomainStatus>;

/**
 * The check as a process runs it. Each check gets a resolver of its own, so that it reads live
 * DNS: a customer who just fixed a record sees the fix on the next check, not a cached answer.
 */
export function domainStatusChecker(settings: OnboardingSettings): DomainStatusChecker {
  const system = getServers()
    .filter((server) => /^\d+\.\d+\.\d+\.\d+$/.test(server))
    .map((server) => `${server}:53`);
  const nameservers = settings.nameservers ?? (system.length ? system : ["127.0.0.1:53"]);
  return (domain) =>
    checkDomainStatus(domain, {
      resolver: createResolver({ nameservers, timeoutMs: settings.timeoutMs }),
      reportsDomain: settings.reportsDomain,
      safeSpfZone: settings.safeSpfZone,
    });
}
