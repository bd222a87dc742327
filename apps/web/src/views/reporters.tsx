import type { ListAnswer, OrganizationRecord } from "../api/types.js";
import { useApi } from "../api/use-api.js";
import { passFailByReporter, rowsChartHeight } from "../charts/options.js";
import { Card } from "../components/card.js";
import { Chart } from "../components/chart.js";
import { type Column, DataTable } from "../components/data-table.js";
import { EmptyState } from "../components/empty-state.js";
import { ErrorNotice, Loading } from "../components/notice.js";
import { useFilters } from "../lib/filters.js";
import { describePeriod } from "../lib/period.js";
import { dkimAligned, failing, messages, passShare, spfAligned } from "./columns.js";

/** The organisations that send reports (Google, Microsoft, …) and the messages they saw. */
export function Reporters() {
  const filters = useFilters();
  const reporters = useApi<ListAnswer<OrganizationRecord>>("aggregate_by_organization", {
    ...filters.query,
    per_page: 1000,
  });
  if (reporters.loading && !reporters.data) return <Loading what="the reporters" />;
  if (reporters.error) return <ErrorNotice error={reporters.error} />;
  const records = reporters.data?.records ?? [];
  if (records.length === 0) {
    return (
      <EmptyState title={`No reports for ${describePeriod(filters.period)}`}>
        Choose a longer period. Receivers send aggregate reports once a day to the rua address of your DMARC
        record.
      </EmptyState>
    );
  }
  const columns: Column<OrganizationRecord>[] = [
    { key: "reporter", label: "Reporter", value: (r) => r.Organization },
    messages(),
    passShare(),
    failing(),
    spfAligned(),
    dkimAligned(),
  ];
  return (
    <div class="view">
      <Card title="Messages by reporter" id="reporters-chart" wide>
        <Chart
          option={passFailByReporter(records)}
          label="Messages each reporting organisation saw pass and fail DMARC, the ten with the most"
          height={rowsChartHeight(Math.min(10, records.length))}
        />
      </Card>
      <Card title="Reporting organisations" id="reporters-card" wide>
        <DataTable
          id="reporters"
          caption="Reporting organisations and the messages they reported"
          columns={columns}
          rows={records}
          rowKey={(r) => r.Organization}
          defaultSort="-messages"
          csvName="reporters.csv"
        />
      </Card>
    </div>
  );
}
