import type { DomainEvent, EventType } from "@dmarc-ledger/events";
import { unfedTypeList } from "./feed-payloads.js";

/**
 * Events of no tenant, never in a feed: the person behind an account (UserCreated, UserErased:
 * one person may be of several tenants), reverse DNS shared by every tenant (SourceIpResolved),
 * input that named nobody (ReportRejected: its raw bytes may be anyone's mail) and the
 * deployment's retention runs.
 */
export const unfedTypes: ReadonlySet<EventType> = new Set(unfedTypeList);

/** The report domain of a report event, lower-case without the final dot; null for other events. */
export function reportDomainOf(event: DomainEvent): string | null {
  switch (event.type) {
    case "AggregateReportReceived":
      return normalised(event.data.policy.domain);
    case "ForensicReportReceived":
      return normalised(event.data.reportedDomain);
    case "TlsReportReceived": {
      // A TLS report is sent per recipient domain (RFC 8460 §4): its policies name that domain,
      // a no-policy-found entry sometimes none. The first named domain is the report's.
      const named = event.data.policies.find((policy) => policy.policyDomain !== "");
      return named ? normalised(named.policyDomain) : null;
    }
    default:
      return null;
  }
}

/**
 * The tenant a non-report event is for: the one its payload names. Scopes that are not tenants
 * (a domain's own scope `domain:<name>`, `-` for nobody) name none.
 */
export function namedTenantOf(event: DomainEvent): string | null {
  if (unfedTypes.has(event.type)) return null;
  const tenantId = (event.data as { tenantId?: unknown }).tenantId;
  if (typeof tenantId !== "string" || tenantId === "-" || tenantId.startsWith("domain:")) return null;
  return tenantId;
}

export function normalised(domain: string): string {
  return domain.trim().toLowerCase().replace(/\.$/, "");
}

/** The domain and every parent of it, most specific first: a.b.example.com, b.example.com, … */
export function suffixesOf(domain: string): string[] {
  const labels = domain.split(".");
  return labels.map((_, index) => labels.slice(index).join("."));
}

/** com.example.mail for mail.example.com: a domain's subdomains sort right after it. */
export function reversedDomain(domain: string): string {
  return domain.split(".").reverse().join(".");
}
