import {
  byVolumeThenKey,
  countersOf,
  dmarcPass,
  groupBy,
  mostMessages,
  type SimpleRow,
} from "./independent-aggregate.js";

const dispositionRank = (value: string) => ({ reject: 0, quarantine: 1, none: 2 })[value] ?? 3;
const utcDate = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);

/** What the by-source records show of a source no resolver has named. */
export const unnamedSource = { Service: "", ServiceType: "", ASN: "", ASNOrganization: "", Country: "" };

/**
 * aggregate_by_source's records over `rows` (aggregate_by_unaligned_source's with `unaligned`),
 * each source named as `naming` says (default: none), as the contract prints them (reporting-api.test.ts and aggregate-retention.test.ts read them so).
 */
export function expectedSourceRecords(
  rows: SimpleRow[],
  unaligned: boolean,
  naming: (ip: string) => typeof unnamedSource = () => unnamedSource,
) {
  const selected = unaligned ? rows.filter((row) => !dmarcPass(row)) : rows;
  return [...groupBy(selected, (row) => [row.domain, row.sourceIp, row.organization].join("\u0000")).values()]
    .map((group) => {
      const head = group[0]!;
      const disposition = mostMessages(group, (row) => row.disposition, dispositionRank)!;
      return {
        SourceDomain: "",
        DomainPublished: head.domain,
        Organization: head.organization,
        SourceIp: head.sourceIp,
        Disposition: disposition.value,
        ARC: mostMessages(group, (row) => row.arc ?? "")?.value ?? null,
        DispositionCount: String(disposition.count),
        LastDate: utcDate(Math.max(...group.map((row) => row.begin))),
        SPFDomain: mostMessages(group, (row) => row.spf[0]?.domain ?? "")?.value ?? "",
        DKIMDomain:
          mostMessages(
            group,
            (row) => (row.dkim.find((d) => d.result === "pass") ?? row.dkim[0])?.domain ?? "",
          )?.value ?? "",
        ...countersOf(group, unaligned),
        ...naming(head.sourceIp),
      };
    })
    .sort(byVolumeThenKey((record) => [record.DomainPublished, record.SourceIp, record.Organization]));
}
