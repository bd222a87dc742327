import type { ListAnswer, SenderRecord, SourceRecord } from "../api/types.js";
import { useApi } from "../api/use-api.js";
import { Card } from "../components/card.js";
import { type Column, DataTable } from "../components/data-table.js";
import { ErrorNotice, Loading } from "../components/notice.js";
import { useFilters } from "../lib/filters.js";
import { setParams } from "../lib/router.js";
import { messages, passShare } from "./columns.js";
import { sourcesPerRequest } from "./sources-table.js";

/**
 * The sender an address counts for, by the rule of docs/api.md ("The sender of a source IP"):
 * its service (however named), else the base domain of its confirmed name, else its AS's
 * organisation, else unknown.
 */
export function senderOf(r: SourceRecord): string {
  return r.Service || r.SourceDomain || r.ASNOrganization || "unknown";
}

const muted = (text: string) => text || <span class="muted">–</span>;

/**
 * One sender's addresses for one domain: aggregate_by_source for the domain (its first thousand
 * sources by messages, as the Sources tab), those whose sender is this one.
 */
export function SenderIps({ sender }: { sender: SenderRecord }) {
  const filters = useFilters();
  const sources = useApi<ListAnswer<SourceRecord>>("aggregate_by_source", {
    ...filters.query,
    domain: sender.Domain,
    per_page: sourcesPerRequest,
  });
  const close = (
    <button type="button" class="link-button" onClick={() => setParams({ sender: null })}>
      Close
    </button>
  );
  const title = `Addresses of ${sender.Service} for ${sender.Domain}`;
  if (sources.loading && !sources.data) return <Loading what="the sender's addresses" />;
  if (sources.error) return <ErrorNotice error={sources.error} />;
  const rows = (sources.data?.records ?? []).filter((r) => senderOf(r) === sender.Service);
  const columns: Column<SourceRecord>[] = [
    { key: "ip", label: "Source IP", value: (r) => r.SourceIp },
    {
      key: "rdns",
      label: "Reverse DNS",
      value: (r) => r.SourceDomain || null,
      render: (r) => muted(r.SourceDomain),
    },
    {
      key: "asn",
      label: "ASN",
      value: (r) => (r.ASN ? `AS${r.ASN}` : null),
      render: (r) => muted(r.ASN ? `AS${r.ASN}` : ""),
    },
    {
      key: "network",
      label: "Network",
      value: (r) => r.ASNOrganization || null,
      render: (r) => muted(r.ASNOrganization),
    },
    { key: "country", label: "Country", value: (r) => r.Country || null, render: (r) => muted(r.Country) },
    { key: "reporter", label: "Reporter", value: (r) => r.Organization },
    messages<SourceRecord>(),
    passShare<SourceRecord>(),
  ];
  return (
    <Card title={title} id="sender-ips-card" wide>
      <p class="hint">
        {close} · reports of {sender.Domain} and its subdomains, one row per address and reporter.
      </p>
      <DataTable
        id="sender-ips"
        caption={title}
        columns={columns}
        rows={rows}
        rowKey={(r) => `${r.DomainPublished}|${r.SourceIp}|${r.Organization}`}
        defaultSort="-messages"
        csvName="sender-addresses.csv"
      />
    </Card>
  );
}
