import { apiGet } from "../api/client.js";
import type { ListAnswer, SourceRecord } from "../api/types.js";
import { useApi } from "../api/use-api.js";
import { passFailBySource, rowsChartHeight } from "../charts/options.js";
import { Card } from "../components/card.js";
import { Chart } from "../components/chart.js";
import { type Column, DataTable } from "../components/data-table.js";
import { EmptyState } from "../components/empty-state.js";
import { ErrorNotice, Loading } from "../components/notice.js";
import { useFilters } from "../lib/filters.js";
import { formatCount } from "../lib/format.js";
import { describePeriod } from "../lib/period.js";
import { dkimAligned, messages, passShare, sourceNames, spfAligned } from "./columns.js";

/** The API pages sources by messages; the view takes the first thousand, sorted and paged here. */
export const sourcesPerRequest = 1000;

const key = (r: SourceRecord) => `${r.DomainPublished}|${r.SourceIp}|${r.Organization}`;

/** Sending sources (IP, reverse DNS, domain, reporter) from aggregate_by_source or its unaligned variant. */
export function SourcesTable({
  endpoint,
}: {
  endpoint: "aggregate_by_source" | "aggregate_by_unaligned_source";
}) {
  const filters = useFilters();
  const sources = useApi<ListAnswer<SourceRecord>>(endpoint, {
    ...filters.query,
    per_page: sourcesPerRequest,
  });
  if (sources.loading && !sources.data) return <Loading what="the sources" />;
  if (sources.error) return <ErrorNotice error={sources.error} />;
  const records = sources.data?.records ?? [];
  const total = Number(sources.data?.total ?? 0);
  const unaligned = endpoint === "aggregate_by_unaligned_source";
  const columns: Column<SourceRecord>[] = [
    ...sourceNames(),
    unaligned ? { ...messages<SourceRecord>(), label: "Failing messages" } : messages<SourceRecord>(),
    ...(unaligned ? [] : [passShare<SourceRecord>()]),
    spfAligned<SourceRecord>(),
    dkimAligned<SourceRecord>(),
    { key: "disposition", label: "Disposition", value: (r) => r.Disposition },
    { key: "last", label: "Last seen", value: (r) => r.LastDate },
  ];
  if (records.length === 0) {
    return (
      <EmptyState title={unaligned ? "No unaligned sources" : "No sources"}>
        {unaligned
          ? `Every message of ${describePeriod(filters.period)} passed DMARC.`
          : `No report covers ${describePeriod(filters.period)}; choose a longer period.`}
      </EmptyState>
    );
  }
  return (
    <>
      {!unaligned ? (
        <Card title="Top sources" id="top-sources" wide>
          <Chart
            option={passFailBySource(records)}
            label="Messages that passed and failed DMARC for the ten sending sources with the most"
            height={rowsChartHeight(Math.min(10, new Set(records.map((r) => r.SourceIp)).size))}
          />
        </Card>
      ) : null}
      <Card title={unaligned ? "Unaligned sources" : "All sources"} id="sources-card" wide>
        <DataTable
          // Its own sort and page in the URL: sorting one tab's table leaves the other's as it was.
          id={unaligned ? "unaligned" : "sources"}
          caption={unaligned ? "Sending sources of messages that failed DMARC" : "Sending sources"}
          columns={columns}
          rows={records}
          rowKey={key}
          defaultSort="-messages"
          csvName={unaligned ? "unaligned-sources.csv" : "sources.csv"}
          fullList={{
            total,
            page: async (page) =>
              (
                await apiGet<ListAnswer<SourceRecord>>(endpoint, {
                  ...filters.query,
                  page,
                  per_page: sourcesPerRequest,
                })
              ).records,
          }}
          note={
            total > records.length
              ? `the ${formatCount(records.length)} with the most messages of ${formatCount(total)} (the CSV holds all)`
              : undefined
          }
        />
      </Card>
    </>
  );
}
