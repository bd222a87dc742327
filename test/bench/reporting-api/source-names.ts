/**
 * Names for the bench's source IPs, appended as the resolver appends them (`SourceIpResolved`),
 * and approvals, so that the sender inventory and policy impact see a realistic mix: 300 services
 * over most addresses, some named by base domain or AS alone; one address in ten left to be named
 * at first sight (nameAtFirstSight), as the service names a new address.
 */
import { decodeEvent, type SourceIpNaming, streams } from "@dmarc-ledger/events";
import { catchUp, type Projection, projectionLags } from "@dmarc-ledger/projection-engine";
import { sourceNamingSetBy } from "@dmarc-ledger/report-read-models";
import type { Runtime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import {
  sourceIpResolverSettingsFromEnv,
  startSourceIpResolverFromSettings,
} from "@dmarc-ledger/source-names";
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

/**
 * Names the addresses no seeded answer named, as the service does at their first sight: the
 * resolver as a process runs it (shipped AS and country databases, the reports' evidence),
 * reverse DNS off, until it has followed every report stored. A bench runs it before its upkeep
 * round so that the rankings it builds are current, and the service's resolver finds nothing new.
 */
export async function nameAtFirstSight(runtime: Pick<Runtime, "store" | "db">): Promise<void> {
  // The resolver takes an address the read model does not show for new: the seeded answers are
  // projected first, and its own as it goes (the service's projector would).
  const project = () => catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
  await project();
  const resolver = startSourceIpResolverFromSettings(
    sourceIpResolverSettingsFromEnv({ SOURCE_IP_RESOLVER: "off" }),
    {
      store: runtime.store,
      db: runtime.db,
      onError: (error) => console.error(error),
    },
  );
  try {
    await untilResolverCaughtUp(runtime, { between: project });
    await project();
  } finally {
    await resolver.stop();
  }
}

/**
 * Waits until the source-IP resolver (the bench's or the running service's) has read every event
 * stored, running `between` (a projection's catch-up) while it waits.
 */
export async function untilResolverCaughtUp(
  runtime: Pick<Runtime, "store" | "db">,
  options: { between?: () => Promise<unknown>; timeoutMs?: number } = {},
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 30 * 60_000;
  const started = performance.now();
  const worker = { name: resolverName } as Projection;
  for (;;) {
    const [lag] = await projectionLags(runtime.db, runtime.store, [worker], 1);
    if (lag?.events === 0) return;
    if (performance.now() - started > timeoutMs)
      throw new Error(`the source-IP resolver was still behind after ${Math.round(timeoutMs / 1000)} s`);
    await options.between?.();
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The name startSourceIpResolver's follower keeps its checkpoint under. */
const resolverName = "process:source_ip_resolver";

/** The columns senderOf reads, for one address. */
type NamingColumns = { service_name: string | null; source_domain: string; asn_organization: string | null };

/**
 * An address's naming read from its own stream, each answer applied as the read model applies it
 * (sourceNamingSetBy): the baseline's names, independent of the source_ip_name projection.
 */
export async function namingFromStream(store: Runtime["store"], ip: string): Promise<NamingColumns> {
  const naming: NamingColumns = { service_name: null, source_domain: "", asn_organization: null };
  for (const recorded of await store.readStream(streams.sourceIp(ip))) {
    const event = decodeEvent(recorded);
    if (event?.type !== "SourceIpResolved") continue;
    const { columns } = sourceNamingSetBy(event.data);
    if (columns.service_name !== undefined) naming.service_name = columns.service_name;
    if (columns.source_domain !== undefined) naming.source_domain = columns.source_domain;
    if (columns.asn_organization !== undefined) naming.asn_organization = columns.asn_organization;
  }
  return naming;
}
