import type { ListAnswer, TlsDateRecord, TlsDomainRecord, TlsFailureRecord } from "../api/types.js";
import { useApi } from "../api/use-api.js";
import { rowsChartHeight } from "../charts/options.js";
import { failedSessionsByLabel, tlsSessionsOverTime } from "../charts/tls-options.js";
import { Card } from "../components/card.js";
import { Chart } from "../components/chart.js";
import { type Column, DataTable } from "../components/data-table.js";
import { EmptyState } from "../components/empty-state.js";
import { ErrorNotice, Loading } from "../components/notice.js";
import { useFilters } from "../lib/filters.js";
import { count, formatCount, formatShare, share } from "../lib/format.js";
import { describePeriod, seriesBucket } from "../lib/period.js";
import { withParams } from "../lib/router.js";
import { AppLink } from "./app-link.js";

/** Failed sessions summed over tls_failures' records by one of their fields. */
export interface FailedBy {
  key: string;
  failed: number;
}

export function failedBy(records: readonly TlsFailureRecord[], field: keyof TlsFailureRecord): FailedBy[] {
  const sums = new Map<string, number>();
  for (const record of records)
    sums.set(record[field], (sums.get(record[field]) ?? 0) + count(record.FailedSessions));
  return [...sums]
    .map(([key, failed]) => ({ key, failed }))
    .sort((a, b) => b.failed - a.failed || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

const countCell = <R,>(key: string, label: string, read: (row: R) => string): Column<R> => ({
  key,
  label,
  numeric: true,
  value: (row) => count(read(row)),
  render: (row) => formatCount(read(row)),
});

/** A field a report left out shows as "–" and is empty in the CSV. */
const textCell = <R,>(key: string, label: string, read: (row: R) => string): Column<R> => ({
  key,
  label,
  value: (row) => read(row),
  render: (row) => read(row) || "–",
});

function FailedByCard({
  title,
  id,
  what,
  rows,
}: {
  title: string;
  id: string;
  what: string;
  rows: FailedBy[];
}) {
  const columns: Column<FailedBy>[] = [
    textCell(id, what, (row) => row.key),
    {
      key: "failed",
      label: "Failed sessions",
      numeric: true,
      value: (row) => row.failed,
      render: (row) => formatCount(row.failed),
    },
  ];
  const top = rows.slice(0, 10);
  return (
    <Card title={title} id={`${id}-card`}>
      <Chart
        option={failedSessionsByLabel(top.map((row) => ({ label: row.key || "–", failed: row.failed })))}
        label={`Failed TLS sessions by ${what.toLowerCase()}, the ten with the most`}
        height={rowsChartHeight(top.length)}
      />
      <DataTable
        id={id}
        caption={`Failed TLS sessions by ${what.toLowerCase()}`}
        columns={columns}
        rows={rows}
        rowKey={(row) => row.key}
        defaultSort="-failed"
        pageSize={10}
        csvName={`tls-failures-by-${id}.csv`}
      />
    </Card>
  );
}

/**
 * SMTP TLS reports (RFC 8460): sessions and their failed share over time, per policy domain and
 * type, and the failures by result type, by receiving MX and by reporter, over the period and
 * domain of the filters.
 */
export function Tls() {
  const filters = useFilters();
  const bucket = seriesBucket(filters.period);
  const domains = useApi<ListAnswer<TlsDomainRecord>>("tls_by_domain", { ...filters.query, per_page: 1000 });
  const failures = useApi<ListAnswer<TlsFailureRecord>>("tls_failures", { ...filters.query, per_page: 1000 });
  const series = useApi<ListAnswer<TlsDateRecord>>("tls_by_date", {
    ...filters.query,
    bucket,
    per_page: 1000,
  });
  if (domains.loading && !domains.data) return <Loading what="the TLS reports" />;
  if (domains.error) return <ErrorNotice error={domains.error} />;
  const records = domains.data?.records ?? [];
  if (records.length === 0) {
    return (
      <EmptyState title={`No TLS reports for ${describePeriod(filters.period)}`}>
        Receivers send SMTP TLS reports (RFC 8460) to the rua address of your domain's _smtp._tls record, once
        a day. Choose a longer period, or publish the record (the Domains page says what to publish).
      </EmptyState>
    );
  }
  const failureRecords = failures.data?.records ?? [];
  const domainColumns: Column<TlsDomainRecord>[] = [
    {
      key: "domain",
      label: "Domain",
      value: (row) => row.Domain,
      render: (row) => <AppLink href={withParams({ domain: row.Domain })}>{row.Domain}</AppLink>,
    },
    textCell("policy", "Policy", (row) => row.PolicyType),
    countCell("reports", "Reports", (row) => row.Reports),
    countCell("sessions", "Sessions", (row) => row.Sessions),
    countCell("successful", "Successful", (row) => row.Successful),
    countCell("failed", "Failed", (row) => row.Failed),
    {
      key: "failed_share",
      label: "Failed share",
      numeric: true,
      value: (row) => share(row.Failed, row.Sessions),
      render: (row) => formatShare(share(row.Failed, row.Sessions)),
    },
  ];
  const failureColumns: Column<TlsFailureRecord>[] = [
    textCell("domain", "Domain", (row) => row.Domain),
    textCell("policy", "Policy", (row) => row.PolicyType),
    textCell("result", "Result", (row) => row.ResultType),
    textCell("mx", "Receiving MX", (row) => row.ReceivingMxHostname),
    textCell("mx_ip", "MX address", (row) => row.ReceivingIp),
    textCell("sender", "Sending MTA", (row) => row.SendingMtaIp),
    textCell("reporter", "Reporter", (row) => row.Organization),
    countCell("failed", "Failed sessions", (row) => row.FailedSessions),
  ];
  return (
    <div class="view">
      <Card title="Sessions over time" id="tls-over-time" wide>
        {series.data ? (
          <Chart
            option={tlsSessionsOverTime(series.data.records)}
            label={`SMTP TLS sessions per ${bucket}, successful and failed, and the failed share`}
          />
        ) : series.error ? (
          <ErrorNotice error={series.error} />
        ) : (
          <Loading what="the sessions over time" />
        )}
      </Card>
      <Card title="Policy domains" id="tls-domains-card" wide>
        <DataTable
          id="tls-domains"
          caption="TLS sessions per policy domain and policy type"
          columns={domainColumns}
          rows={records}
          rowKey={(row) => `${row.Domain}|${row.PolicyType}`}
          defaultSort="-sessions"
          csvName="tls-domains.csv"
        />
      </Card>
      {failures.error ? <ErrorNotice error={failures.error} /> : null}
      {failureRecords.length > 0 ? (
        <>
          <div class="grid-2">
            <FailedByCard
              title="Failures by type"
              id="tls-result"
              what="Result type"
              rows={failedBy(failureRecords, "ResultType")}
            />
            <FailedByCard
              title="Failures by receiving MX"
              id="tls-mx"
              what="Receiving MX"
              rows={failedBy(failureRecords, "ReceivingMxHostname")}
            />
          </div>
          <FailedByCard
            title="Failures by reporter"
            id="tls-reporter"
            what="Reporter"
            rows={failedBy(failureRecords, "Organization")}
          />
          <Card title="Failure details" id="tls-failures-card" wide>
            <DataTable
              id="tls-failures"
              caption="Failed TLS sessions per policy, result, receiving MX, sending MTA and reporter"
              columns={failureColumns}
              rows={failureRecords}
              rowKey={(row) =>
                [
                  row.Domain,
                  row.PolicyType,
                  row.ResultType,
                  row.SendingMtaIp,
                  row.ReceivingMxHostname,
                  row.ReceivingIp,
                  row.Organization,
                ].join("|")
              }
              defaultSort="-failed"
              csvName="tls-failures.csv"
              note={
                Number(failures.data?.total ?? 0) > failureRecords.length
                  ? `The ${failureRecords.length} with the most failed sessions of ${failures.data?.total}.`
                  : undefined
              }
            />
          </Card>
        </>
      ) : null}
    </div>
  );
}
