import { Fragment } from "preact";
import type { ForensicDetail, ForensicRecord, ListAnswer } from "../api/types.js";
import { useApi } from "../api/use-api.js";
import { Card } from "../components/card.js";
import { type Column, DataTable } from "../components/data-table.js";
import { EmptyState } from "../components/empty-state.js";
import { ErrorNotice, Loading } from "../components/notice.js";
import { useFilters } from "../lib/filters.js";
import { count, formatCount, formatTime } from "../lib/format.js";
import { describePeriod } from "../lib/period.js";
import { setParams, useLocation } from "../lib/router.js";

/**
 * Failure (forensic) reports: the list, and one report's headers as the API keeps them (the
 * header block only, cut at 16,384 characters; no body is ever stored).
 */
export function FailureReports() {
  const filters = useFilters();
  const { params } = useLocation();
  const reports = useApi<ListAnswer<ForensicRecord>>("forensic", { ...filters.query, per_page: 1000 });
  const records = reports.data?.records ?? [];
  const chosen = records.find((r) => r.ForensicId === params.get("report")) ?? null;
  const detail = useApi<{ record: ForensicDetail }>(chosen ? "failure_report" : null, {
    forensic_id: chosen?.ForensicId,
  });
  if (reports.loading && !reports.data) return <Loading what="the failure reports" />;
  if (reports.error) return <ErrorNotice error={reports.error} />;
  const columns: Column<ForensicRecord>[] = [
    { key: "received", label: "Received", value: (r) => r.Received, render: (r) => formatTime(r.Received) },
    { key: "domain", label: "Domain", value: (r) => r.Domain },
    {
      key: "subject",
      label: "Subject",
      wrap: true,
      value: (r) => r.Subject,
      render: (r) => (
        <button
          type="button"
          class="link-button"
          aria-pressed={chosen?.ForensicId === r.ForensicId}
          onClick={() => setParams({ report: r.ForensicId })}
        >
          {r.Subject || "(no subject)"}
        </button>
      ),
    },
    {
      key: "amount",
      label: "Messages",
      numeric: true,
      value: (r) => count(r.Amount),
      render: (r) => formatCount(r.Amount),
    },
  ];
  if (records.length === 0) {
    return (
      <EmptyState title={`No failure reports for ${describePeriod(filters.period)}`}>
        Few receivers send failure reports; those that do send them to the ruf address of your DMARC record.
      </EmptyState>
    );
  }
  return (
    <div class={chosen ? "view split" : "view"}>
      <Card title="Failure reports" id="failure-list" wide={!chosen}>
        <DataTable
          id="failures"
          caption="Failure reports, newest first"
          columns={columns}
          rows={records}
          rowKey={(r) => r.ForensicId}
          defaultSort="-received"
          csvName="failure-reports.csv"
          selected={chosen?.ForensicId ?? null}
        />
      </Card>
      {chosen ? (
        <Card
          title="Report"
          id="failure-detail"
          actions={
            <button type="button" class="link-button" onClick={() => setParams({ report: null })}>
              Close
            </button>
          }
        >
          <dl class="facts">
            <dt>Subject</dt>
            <dd>{chosen.Subject || "(no subject)"}</dd>
            <dt>Domain</dt>
            <dd>{chosen.Domain}</dd>
            <dt>Received</dt>
            <dd>{formatTime(chosen.Received)}</dd>
            <dt>Messages</dt>
            <dd>{formatCount(chosen.Amount)}</dd>
            {detail.data?.record.ForensicId === chosen.ForensicId ? (
              <ReportFacts detail={detail.data.record} />
            ) : null}
          </dl>
          <h3>Headers</h3>
          <p class="hint">
            The reported message's header block as stored: no body is kept, long blocks are cut.
          </p>
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling block must take focus, or a keyboard cannot scroll it */}
          <section class="headers" tabIndex={0} aria-label="Headers of the reported message">
            <pre>{chosen.Headers}</pre>
          </section>
        </Card>
      ) : null}
    </div>
  );
}

/** What the report says of the message, each where it says it. */
function ReportFacts({ detail }: { detail: ForensicDetail }) {
  const facts: [string, string | null][] = [
    ["Source IP", detail.SourceIp],
    ["SPF", detail.SpfResult],
    ["DKIM", detail.DkimResult],
    ["Failed", detail.AuthFailure],
    ["Delivery", detail.DeliveryResult],
    ["Feedback type", detail.FeedbackType],
  ];
  return (
    <>
      {facts.map(([label, value]) => (
        <Fragment key={label}>
          <dt>{label}</dt>
          <dd>{value ?? "not in the report"}</dd>
        </Fragment>
      ))}
    </>
  );
}
