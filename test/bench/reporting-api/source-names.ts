/**
 * Names for the bench's source IPs, appended as the resolver appends them (`SourceIpResolved`),
 * and approvals, so that the sender inventory and policy impact see a realistic mix: 300 services
 * over most addresses, some named by base domain or AS alone, one address in ten never resolved.
 */
import { type SourceIpNaming, streams } from "@dmarc-ledger/events";
import type { Runtime } from "@dmarc-ledger/runtime";
import { setSenderApproval } from "@dmarc-ledger/tenancy";
import { namedSourceIp } from "../../support/source-ip-naming.js";
import { domainName } from "./generate.js";
import { inParallel } from "./seed.js";

/** A deterministic naming of the index-th address, and the sender it makes. */
export function namingOf(index: number): { naming: SourceIpNaming; sender: string } {
  const asn = { number: 64_512 + (index % 500), organization: `Network ${index % 500}` };
  const sources = { serviceMap: "bench", asnDatabase: "bench", countryDatabase: "bench" };
  const country = ["US", "DE", "FR", "GB", "JP"][index % 5]!;
  const bucket = index % 10;
  if (bucket < 6) {
    const service = { name: `Service ${String(index % 300).padStart(3, "0")}`, type: "SaaS" };
    return {
      naming: { baseDomain: `s${index % 300}.example`, service, asn, country, sources },
      sender: service.name,
    };
  }
  if (bucket < 8) {
    const baseDomain = `host${index % 2000}.example`;
    return { naming: { baseDomain, service: null, asn, country, sources }, sender: baseDomain };
  }
  return { naming: { baseDomain: null, service: null, asn, country, sources }, sender: asn.organization };
}

/** Names every address but one in ten (sorted, so the same address gets the same name); returns ip → sender. */
export async function seedSourceNames(
  runtime: Pick<Runtime, "store">,
  ips: Iterable<string>,
): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  const list = [...ips].sort();
  let next = 0;
  await inParallel(
    () => (next < list.length ? next++ : null),
    6,
    async (index) => {
      if (index % 10 === 9) return;
      const ip = list[index]!;
      const { naming, sender } = namingOf(index);
      names.set(ip, sender);
      await runtime.store.append(
        streams.sourceIp(ip),
        [namedSourceIp(ip, naming, { resolvedAt: new Date(0), metadata: { causedBy: "bench" } })],
        "no_stream",
      );
    },
  );
  return names;
}

/** Every domain approves its three lowest-numbered services. */
export async function seedApprovals(
  runtime: Pick<Runtime, "store">,
  tenantId: string,
  domains: number,
): Promise<void> {
  for (let i = 0; i < domains; i += 1) {
    for (const name of ["Service 000", "Service 001", "Service 002"]) {
      await setSenderApproval(
        runtime.store,
        { tenantId, domain: domainName(i), service: name, approved: true },
        { causedBy: "bench" },
      );
    }
  }
}
