import type { Counters, SourceRecord } from "../api/types.js";
import type { Column } from "../components/data-table.js";
import { count, formatCount, formatShare, share } from "../lib/format.js";

/** The counter columns most tables share: counts as integers, shares in percent with one decimal. */
export function countColumn<R extends Counters>(
  key: string,
  label: string,
  field: keyof Counters,
): Column<R> {
  return {
    key,
    label,
    numeric: true,
    value: (row) => count(row[field]),
    render: (row) => formatCount(row[field]),
  };
}

export function shareColumn<R extends Counters>(
  key: string,
  label: string,
  field: keyof Counters,
): Column<R> {
  return {
    key,
    label,
    numeric: true,
    value: (row) => share(row[field], row.Volume),
    render: (row) => formatShare(share(row[field], row.Volume)),
  };
}

export const messages = <R extends Counters>() => countColumn<R>("messages", "Messages", "Volume");
export const passShare = <R extends Counters>() => shareColumn<R>("pass", "DMARC pass", "DMARC");
export const failing = <R extends Counters>() => countColumn<R>("failing", "Failing", "DMARCUnaligned");
export const spfAligned = <R extends Counters>() => shareColumn<R>("spf", "SPF aligned", "SPFAligned");
export const dkimAligned = <R extends Counters>() => shareColumn<R>("dkim", "DKIM aligned", "DKIMAligned");

/** What names a sending source: its IP, its reverse DNS name, the domain and the reporter. */
export const sourceNames = (): Column<SourceRecord>[] => [
  { key: "ip", label: "Source IP", value: (r) => r.SourceIp },
  {
    key: "rdns",
    label: "Reverse DNS",
    value: (r) => r.SourceDomain || null,
    render: (r) => r.SourceDomain || <span class="muted">–</span>,
  },
  { key: "domain", label: "Domain", value: (r) => r.DomainPublished },
  { key: "reporter", label: "Reporter", value: (r) => r.Organization },
];
