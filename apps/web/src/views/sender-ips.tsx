import { useEffect, useState } from "preact/hooks";
import { type ApiError, apiGet, asApiError, type Query } from "../api/client.js";
import type { ListAnswer, SenderRecord, SourceRecord } from "../api/types.js";
import { useApi } from "../api/use-api.js";
import { Card } from "../components/card.js";
import { type Column, DataTable } from "../components/data-table.js";
import { ErrorNotice, Loading } from "../components/notice.js";
import { useFilters } from "../lib/filters.js";
import { formatCount } from "../lib/format.js";
import { setParams } from "../lib/router.js";
import { messages, passShare } from "./columns.js";
import { sourcesPerRequest } from "./sources-table.js";

const muted = (text: string) => text || <span class="muted">–</span>;

/**
 * The panel reads at most this many pages of a sender's addresses (10,000): a sender that has
 * more shows those with the most messages, and its CSV holds every one.
 */
const panelPages = 10;

/**
 * The pages after the first of a sender's addresses, up to panelPages, once the first is in:
 * [] while there are none or while they load (loading says which), or the error of one.
 */
function useFollowingPages(
  first: ListAnswer<SourceRecord> | undefined,
  query: Query,
): { records: SourceRecord[]; loading: boolean; error: ApiError | undefined } {
  const [state, setState] = useState<{
    records: SourceRecord[];
    loading: boolean;
    error: ApiError | undefined;
  }>({
    records: [],
    loading: false,
    error: undefined,
  });
  useEffect(() => {
    const total = Number(first?.total ?? 0);
    const pages = Math.min(panelPages, Math.ceil(total / sourcesPerRequest));
    if (!first || pages <= 1) {
      setState({ records: [], loading: false, error: undefined });
      return;
    }
    const controller = new AbortController();
    setState({ records: [], loading: true, error: undefined });
    (async () => {
      const records: SourceRecord[] = [];
      for (let page = 2; page <= pages; page++) {
        const answer = await apiGet<ListAnswer<SourceRecord>>(
          "aggregate_by_source",
          { ...query, page, per_page: sourcesPerRequest },
          controller.signal,
        );
        records.push(...answer.records);
      }
      setState({ records, loading: false, error: undefined });
    })().catch((error: unknown) => {
      if (!controller.signal.aborted) setState({ records: [], loading: false, error: asApiError(error) });
    });
    return () => controller.abort();
  }, [first]);
  return state;
}

/**
 * One sender's addresses for one domain: aggregate_by_source for the domain and this sender
 * (`sender=`, named by the API as aggregate_by_sender names it), every page of it up to
 * panelPages, by messages; the CSV holds every one.
 */
export function SenderIps({ sender }: { sender: SenderRecord }) {
  const filters = useFilters();
  const query = { ...filters.query, domain: sender.Domain, sender: sender.Service };
  const sources = useApi<ListAnswer<SourceRecord>>("aggregate_by_source", {
    ...query,
    per_page: sourcesPerRequest,
  });
  const following = useFollowingPages(sources.data, query);
  const close = (
    <button type="button" class="link-button" onClick={() => setParams({ sender: null })}>
      Close
    </button>
  );
  const title = `Addresses of ${sender.Service} for ${sender.Domain}`;
  if ((sources.loading && !sources.data) || following.loading)
    return <Loading what="the sender's addresses" />;
  if (sources.error) return <ErrorNotice error={sources.error} />;
  if (following.error) return <ErrorNotice error={following.error} />;
  const rows = [...(sources.data?.records ?? []), ...following.records];
  const total = Number(sources.data?.total ?? 0);
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
        fullList={{
          total,
          page: async (page) =>
            (
              await apiGet<ListAnswer<SourceRecord>>("aggregate_by_source", {
                ...query,
                page,
                per_page: sourcesPerRequest,
              })
            ).records,
        }}
        note={
          total > rows.length
            ? `the ${formatCount(rows.length)} with the most messages of ${formatCount(total)} (the CSV holds all)`
            : undefined
        }
      />
    </Card>
  );
}
