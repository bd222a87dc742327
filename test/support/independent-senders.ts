import { readFileSync } from "node:fs";
import {
  type Counters,
  countersOf,
  groupBy,
  readSimpleRows,
  type SimpleRow,
} from "./independent-aggregate.js";

/**
 * The sender inventory and the policy impact computed again from the report files, for the API
 * tests to compare against: rows read by independent-aggregate.ts (regular expressions), plus
 * what a receiver said of forwarding, read here the same simple way.
 */
export interface SenderRow extends SimpleRow {
  /** ARC passed, or a reason of type forwarded, trusted_forwarder or mailing_list. */
  forwarded: boolean;
}

export function readSenderRows(path: string): SenderRow[] {
  const text = readFileSync(path, "utf8");
  const records = [...text.matchAll(/<record>([\s\S]*?)<\/record>/g)].map((match) => match[1]!);
  return readSimpleRows(path).map((row, index) => {
    const types = [...(records[index] ?? "").matchAll(/<type>([^<]*)<\/type>/g)].map((m) =>
      m[1]!.trim().toLowerCase(),
    );
    return {
      ...row,
      forwarded:
        row.arc === "pass" ||
        types.some((type) => ["forwarded", "trusted_forwarder", "mailing_list"].includes(type)),
    };
  });
}

/** What names a source IP in a test: as the API groups it. */
export interface TestNaming {
  kind: "service" | "base_domain" | "asn" | "unknown";
  sender: string;
  type: string;
  asn: string;
  organization: string;
  country: string;
  /** What named it, where the test knows (else: the kind's usual path, `rdns` for a name). */
  namedBy?: ExpectedSender["NamedBy"];
}

export const unknownSender: TestNaming = {
  kind: "unknown",
  sender: "unknown",
  type: "",
  asn: "",
  organization: "",
  country: "",
};

/** Approvals as a test set them: per tenant's domain, by sender name and by single address. */
export interface TestApprovals {
  services: Map<string, boolean>;
  addresses: Map<string, boolean>;
}

const key = (domain: string, value: string) => `${domain}\u0000${value}`;

export function approvalOf(
  approvals: TestApprovals,
  owner: string,
  ip: string,
  sender: string,
): boolean | null {
  return approvals.addresses.get(key(owner, ip)) ?? approvals.services.get(key(owner, sender)) ?? null;
}

export const approvalKey = key;

/** Half-up rounding to 4 decimals, in integers. */
export function shareOf(part: string, whole: string): string {
  const w = BigInt(whole);
  if (w === 0n) return "0.0000";
  const scaled = (BigInt(part) * 20_000n + w) / (2n * w);
  return `${scaled / 10_000n}.${(scaled % 10_000n).toString().padStart(4, "0")}`;
}

/** The most messages' value, ties to the smallest (bytewise). */
function most(rows: SenderRow[], value: (row: SenderRow) => string): string {
  const sums = new Map<string, number>();
  for (const row of rows) sums.set(value(row), (sums.get(value(row)) ?? 0) + row.count);
  return [...sums].sort(([a, n], [b, m]) => m - n || (a < b ? -1 : a > b ? 1 : 0))[0]?.[0] ?? "";
}

export interface ExpectedSender extends Counters {
  Domain: string;
  Service: string;
  ServiceType: string;
  SenderKind: string;
  NamedBy: "rdns" | "auth_domain" | "asn" | null;
  ASN: string;
  ASNOrganization: string;
  Country: string;
  SourceIPs: string;
  DMARCShare: string;
  SPFAlignedShare: string;
  DKIMAlignedShare: string;
  Approved: boolean | null;
}

/** aggregate_by_sender's records over `rows`, each row under the tenant's domain `ownerOf` says. */
export function expectedSenders(
  rows: SenderRow[],
  ownerOf: (domain: string) => string,
  naming: (ip: string) => TestNaming,
  approvals: TestApprovals,
): ExpectedSender[] {
  const groups = groupBy(rows, (row) => key(ownerOf(row.domain), naming(row.sourceIp).sender));
  return [...groups.values()]
    .map((group) => {
      const owner = ownerOf(group[0]!.domain);
      const name = naming(group[0]!.sourceIp);
      const counters = countersOf(group);
      const ips = [...new Set(group.map((row) => row.sourceIp))];
      const decisions = ips.map((ip) => approvalOf(approvals, owner, ip, name.sender));
      return {
        Domain: owner,
        Service: name.sender,
        ServiceType: most(group, (row) => naming(row.sourceIp).type),
        SenderKind: name.kind,
        // The tests' namings name services by their forward-confirmed names.
        NamedBy: (name.namedBy !== undefined
          ? name.namedBy
          : name.kind === "unknown"
            ? null
            : name.kind === "asn"
              ? "asn"
              : "rdns") as ExpectedSender["NamedBy"],
        ASN: most(group, (row) => naming(row.sourceIp).asn),
        ASNOrganization: most(group, (row) => naming(row.sourceIp).organization),
        Country: most(group, (row) => naming(row.sourceIp).country),
        SourceIPs: String(ips.length),
        ...counters,
        DMARCShare: shareOf(counters.DMARC, counters.Volume),
        SPFAlignedShare: shareOf(counters.SPFAligned, counters.Volume),
        DKIMAlignedShare: shareOf(counters.DKIMAligned, counters.Volume),
        Approved: decisions.every((d) => d === true)
          ? true
          : decisions.every((d) => d === false)
            ? false
            : null,
      };
    })
    .sort((a, b) => {
      const volume = Number(b.Volume) - Number(a.Volume);
      if (volume !== 0) return volume;
      for (const field of ["Domain", "Service"] as const) {
        if (a[field] < b[field]) return -1;
        if (a[field] > b[field]) return 1;
      }
      return 0;
    });
}

export interface ExpectedImpact {
  total: number;
  totals: Record<string, string>;
  records: Record<string, unknown>[];
}

/**
 * policy_impact over `rows`: the failing messages a stricter policy would stop (p=quarantine: those
 * delivered, disposition none; p=reject: also those quarantined), per tenant's domain and sender,
 * legitimate at risk when from an approved address or forwarded, else abuse stopped.
 */
export function expectedPolicyImpact(
  rows: SenderRow[],
  policy: "quarantine" | "reject",
  ownerOf: (domain: string) => string,
  naming: (ip: string) => TestNaming,
  approvals: TestApprovals,
): ExpectedImpact {
  const stoppable = policy === "quarantine" ? ["none"] : ["none", "quarantine"];
  const failing = rows.filter(
    (row) => !(row.policyDkim === "pass" || row.policySpf === "pass") && stoppable.includes(row.disposition),
  );
  const records = [
    ...groupBy(failing, (row) => key(ownerOf(row.domain), naming(row.sourceIp).sender)).values(),
  ]
    .map((group) => {
      const owner = ownerOf(group[0]!.domain);
      const name = naming(group[0]!.sourceIp);
      const approvedOf = (ip: string) => approvalOf(approvals, owner, ip, name.sender);
      const ips = [...new Set(group.map((row) => row.sourceIp))];
      const decisions = ips.map(approvedOf);
      let stopped = 0;
      let forwarded = 0;
      let legitimate = 0;
      for (const row of group) {
        stopped += row.count;
        if (row.forwarded) forwarded += row.count;
        if (approvedOf(row.sourceIp) === true || row.forwarded) legitimate += row.count;
      }
      return {
        Domain: owner,
        Service: name.sender,
        ServiceType: most(group, (row) => naming(row.sourceIp).type),
        SenderKind: name.kind,
        Approved: decisions.every((d) => d === true)
          ? true
          : decisions.every((d) => d === false)
            ? false
            : null,
        SourceIPs: String(ips.length),
        Stopped: String(stopped),
        Forwarded: String(forwarded),
        LegitimateAtRisk: String(legitimate),
        AbuseStopped: String(stopped - legitimate),
      };
    })
    .sort((a, b) => {
      const n = Number(b.Stopped) - Number(a.Stopped);
      if (n !== 0) return n;
      for (const field of ["Domain", "Service"] as const) {
        if (a[field] < b[field]) return -1;
        if (a[field] > b[field]) return 1;
      }
      return 0;
    });
  const sum = (field: "Stopped" | "Forwarded" | "LegitimateAtRisk" | "AbuseStopped") =>
    String(records.reduce((total, record) => total + Number(record[field]), 0));
  const counters = countersOf(rows);
  return {
    total: records.length,
    totals: {
      Volume: counters.Volume,
      DMARC: counters.DMARC,
      Stopped: sum("Stopped"),
      Forwarded: sum("Forwarded"),
      LegitimateAtRisk: sum("LegitimateAtRisk"),
      AbuseStopped: sum("AbuseStopped"),
    },
    records,
  };
}
