import type {
  Caller,
  DateRecord,
  DomainRecord,
  ListAnswer,
  SourceRecord,
  TlsDomainRecord,
} from "../api/types.js";
import { useApi } from "../api/use-api.js";
import {
  alignment,
  passFailByDomain,
  rowsChartHeight,
  sumCounters,
  volumeOverTime,
} from "../charts/options.js";
import { Card } from "../components/card.js";
import { Chart } from "../components/chart.js";
import { type Column, DataTable } from "../components/data-table.js";
import { EmptyState } from "../components/empty-state.js";
import { useTenantDomains } from "../components/filters-bar.js";
import { Kpi } from "../components/kpi.js";
import { ErrorNotice, Loading } from "../components/notice.js";
import { useFilters, viewLink } from "../lib/filters.js";
import { count, formatCount, formatPoints, formatShare, share } from "../lib/format.js";
import { describePeriod, previousPeriod, seriesBucket } from "../lib/period.js";
import { withParams } from "../lib/router.js";
import { AppLink } from "./app-link.js";
import { dkimAligned, failing, messages, passShare, sourceNames, spfAligned } from "./columns.js";
import { PublishRua } from "./publish-rua.js";

const percentChange = (now: number, before: number) =>
  before === 0 ? null : Math.round(((now - before) / before) * 1000) / 10;

const shareChange = (now: number | null, before: number | null) =>
  now === null || before === null ? null : Math.round((now - before) * 10) / 10;

/**
 * Per domain: volume, DMARC pass share and its trend against the period before; volume over time
 * by result (GET aggregate_by_date, by day, or by week or month over long periods); SPF and DKIM
 * alignment; the top failing senders.
 */
export function Overview({ caller, features }: { caller: Caller; features: ReadonlySet<string> }) {
  const filters = useFilters();
  const before = previousPeriod(filters.period);
  const domains = useTenantDomains();
  const current = useApi<ListAnswer<DomainRecord>>("aggregate_by_domain", {
    ...filters.query,
    per_page: 1000,
  });
  const previous = useApi<ListAnswer<DomainRecord>>("aggregate_by_domain", {
    start: before.start,
    end: before.end,
    domain: filters.domain,
    per_page: 1000,
  });
  const failingSenders = useApi<ListAnswer<SourceRecord>>("aggregate_by_unaligned_source", {
    ...filters.query,
    per_page: 10,
  });
  // TLS health beside DMARC: the SMTP TLS reports' failed share (RFC 8460), once the API has them.
  const tls = useApi<ListAnswer<TlsDomainRecord>>(features.has("tls_by_domain") ? "tls_by_domain" : null, {
    ...filters.query,
    per_page: 1000,
  });
  const bucket = seriesBucket(filters.period);
  const daily = useApi<ListAnswer<DateRecord>>(
    features.has("aggregate_by_date") ? "aggregate_by_date" : null,
    { ...filters.query, bucket, per_page: 1000 },
  );

  if (domains.data && domains.data.records.length === 0) {
    return (
      <EmptyState title="No domains yet">
        <p>
          Add the domains you send mail from on the <AppLink href="/domains">Domains</AppLink> page; their
          reports then show here.
        </p>
        <PublishRua caller={caller} />
      </EmptyState>
    );
  }
  if (current.loading && !current.data) return <Loading what="the overview" />;
  if (current.error) return <ErrorNotice error={current.error} />;
  const records = current.data?.records ?? [];
  if (records.length === 0) {
    const tlsRecords = tls.data?.records ?? [];
    return (
      <>
        {tlsRecords.length > 0 ? (
          <div class="kpis">
            <TlsHealth records={tlsRecords} />
          </div>
        ) : null}
        <EmptyState title={`No DMARC reports for ${describePeriod(filters.period)}`}>
          <p>
            Choose a longer period, or check that receivers can send reports: the{" "}
            <AppLink href={viewLink("/domains")}>onboarding check</AppLink> of each domain says what to
            change. Reports you have as files can be uploaded on the <AppLink href="/intake">Intake</AppLink>{" "}
            page.
          </p>
          <PublishRua caller={caller} />
        </EmptyState>
      </>
    );
  }

  const totals = sumCounters(records);
  const beforeTotals = sumCounters(previous.data?.records ?? []);
  const hadBefore = count(beforeTotals.Volume) > 0;
  const beforeByDomain = new Map((previous.data?.records ?? []).map((r) => [r.Domain, r]));
  const trend = (row: DomainRecord) => {
    const earlier = beforeByDomain.get(row.Domain);
    return earlier ? shareChange(share(row.DMARC, row.Volume), share(earlier.DMARC, earlier.Volume)) : null;
  };

  const domainColumns: Column<DomainRecord>[] = [
    {
      key: "domain",
      label: "Domain",
      value: (row) => row.Domain,
      render: (row) => <AppLink href={withParams({ domain: row.Domain })}>{row.Domain}</AppLink>,
    },
    messages(),
    passShare(),
    {
      key: "trend",
      label: "Pass trend",
      numeric: true,
      value: trend,
      render: (row) => {
        const change = trend(row);
        return (
          <span class={change === null ? "muted" : change >= 0 ? "good" : "bad"}>{formatPoints(change)}</span>
        );
      },
    },
    failing(),
    spfAligned(),
    dkimAligned(),
  ];

  const senderColumns: Column<SourceRecord>[] = [
    ...sourceNames(),
    { ...messages<SourceRecord>(), label: "Failing messages" },
    { key: "disposition", label: "Disposition", value: (r) => r.Disposition },
  ];

  const passNow = share(totals.DMARC, totals.Volume);
  const passBefore = hadBefore ? share(beforeTotals.DMARC, beforeTotals.Volume) : null;
  const spfNow = share(totals.SPFAligned, totals.Volume);
  const dkimNow = share(totals.DKIMAligned, totals.Volume);

  return (
    <div class="view">
      <div class="kpis">
        <Kpi
          label="Messages"
          value={formatCount(totals.Volume)}
          change={hadBefore ? percentChange(count(totals.Volume), count(beforeTotals.Volume)) : null}
          changeLabel={(c) =>
            // Against a handful of messages, a percentage says less than a factor.
            c >= 900
              ? `×${formatCount(Math.round(c / 100 + 1))}`
              : `${c > 0 ? "+" : c < 0 ? "−" : "±"}${Math.abs(c).toFixed(1)}%`
          }
        />
        <Kpi label="DMARC pass" value={formatShare(passNow)} change={shareChange(passNow, passBefore)} />
        <Kpi
          label="SPF aligned"
          value={formatShare(spfNow)}
          change={hadBefore ? shareChange(spfNow, share(beforeTotals.SPFAligned, beforeTotals.Volume)) : null}
        />
        <Kpi
          label="DKIM aligned"
          value={formatShare(dkimNow)}
          change={
            hadBefore ? shareChange(dkimNow, share(beforeTotals.DKIMAligned, beforeTotals.Volume)) : null
          }
        />
        <TlsHealth records={tls.data?.records ?? []} />
      </div>

      <div class="grid-2">
        {features.has("aggregate_by_date") ? (
          <Card title="Volume over time" id="volume-over-time">
            {daily.data ? (
              <Chart
                option={volumeOverTime(
                  filters.choice.period === "all" ? fromFirstReport(daily.data.records) : daily.data.records,
                )}
                label={`Messages per ${bucket}, stacked: passed DMARC, and failed by what the receiver did`}
              />
            ) : daily.error ? (
              <ErrorNotice error={daily.error} />
            ) : (
              <Loading what="the volume over time" />
            )}
          </Card>
        ) : (
          <Card title="Pass and fail by domain" id="pass-fail-by-domain">
            <Chart
              option={passFailByDomain(records)}
              label="Messages that passed and failed DMARC for each domain, the ten with the most"
              height={rowsChartHeight(Math.min(10, records.length))}
            />
          </Card>
        )}
        <Card title="SPF and DKIM alignment" id="alignment">
          <Chart
            option={alignment(totals)}
            label="SPF and DKIM results: aligned with the From domain, passed but not aligned, failed"
            height={200}
          />
          <p class="hint">
            DMARC passes when SPF or DKIM passes <em>aligned</em> with the visible From domain.
          </p>
        </Card>
      </div>

      <Card title="Domains" id="domains-table" wide>
        <DataTable
          id="domains"
          caption="Domains: messages, DMARC pass share and its trend, failures, alignment"
          columns={domainColumns}
          rows={records}
          rowKey={(row) => row.Domain}
          defaultSort="-messages"
          csvName="domains.csv"
        />
      </Card>

      <Card
        title="Top failing senders"
        id="failing-senders"
        wide
        actions={<AppLink href={viewLink("/senders", { tab: "unaligned" })}>All unaligned sources</AppLink>}
      >
        {failingSenders.error ? <ErrorNotice error={failingSenders.error} /> : null}
        <DataTable
          id="failing"
          caption="Sending sources with the most messages that failed DMARC"
          columns={senderColumns}
          rows={failingSenders.data?.records ?? []}
          rowKey={(r) => `${r.DomainPublished}|${r.SourceIp}|${r.Organization}`}
          defaultSort="-messages"
          csvName="failing-senders.csv"
          pageSize={10}
          empty={
            <EmptyState title="No failing senders in this period">Every message passed DMARC.</EmptyState>
          }
        />
      </Card>
    </div>
  );
}

/** All time's series starts in 1970: its chart starts at the first bucket with mail instead. */
function fromFirstReport(records: readonly DateRecord[]): DateRecord[] {
  const first = records.findIndex((record) => Number(record.Volume) > 0);
  return first < 0 ? [...records] : records.slice(first);
}

/** The SMTP TLS reports' failed share (RFC 8460) over the period: TLS health beside DMARC's. */
function TlsHealth({ records }: { records: readonly TlsDomainRecord[] }) {
  const sessions = records.reduce((sum, r) => sum + count(r.Sessions), 0);
  const failed = records.reduce((sum, r) => sum + count(r.Failed), 0);
  if (sessions === 0) return null;
  return (
    <div class="kpi" id="tls-health">
      <div class="kpi-label">TLS sessions failed</div>
      <div class="kpi-value">{formatShare(share(failed, sessions))}</div>
      <div class="kpi-change kpi-flat muted">
        {formatCount(failed)} of {formatCount(sessions)} ·{" "}
        <AppLink href={viewLink("/tls")}>TLS reports</AppLink>
      </div>
    </div>
  );
}
