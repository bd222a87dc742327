import { Fragment } from "preact";
import { apiWrite } from "../api/client.js";
import type { AlertRecord, AlertRuleRecord, AlertValue, Caller, ListAnswer } from "../api/types.js";
import { useApi } from "../api/use-api.js";
import { Card } from "../components/card.js";
import { type Column, DataTable } from "../components/data-table.js";
import { EmptyState } from "../components/empty-state.js";
import { ErrorNotice, Loading } from "../components/notice.js";
import { alertDays, alertTarget, fieldLabel, fieldValue, ruleName } from "../lib/alert-words.js";
import { useFilters } from "../lib/filters.js";
import { formatTime } from "../lib/format.js";
import { describePeriod } from "../lib/period.js";
import { setParams, useLocation } from "../lib/router.js";
import { AlertRules, Webhooks } from "./alert-settings.js";
import { AppLink } from "./app-link.js";
import { useAction } from "./write-actions.js";

type StateFilter = "open" | "acknowledged" | "all";
const stateOf = (raw: string | null): StateFilter => (raw === "acknowledged" || raw === "all" ? raw : "open");

/**
 * The account's alerts (docs/alerts.md): the list by rule, domain, period and state; one alert's
 * figures and members in words, a link to the view that shows them, and acknowledging it. Below,
 * the rules that raise them and the webhooks that carry them.
 */
export function Alerts({ caller }: { caller: Caller }) {
  const filters = useFilters();
  const { params } = useLocation();
  const canWrite = caller.capabilities.includes("write");
  const rule = params.get("rule");
  const state = stateOf(params.get("state"));
  const alerts = useApi<ListAnswer<AlertRecord>>("alerts", {
    ...filters.query,
    rule,
    state: state === "all" ? null : state,
    per_page: 1000,
  });
  // The rules the API has, for the filter (the rules' card below asks the same, answered once).
  const rules = useApi<ListAnswer<AlertRuleRecord>>("alert_rules").data?.records ?? [];
  const records = alerts.data?.records ?? [];
  const chosen = records.find((alert) => alert.id === params.get("alert")) ?? null;
  const columns: Column<AlertRecord>[] = [
    { key: "raised", label: "Raised", value: (a) => a.raised_at, render: (a) => formatTime(a.raised_at) },
    { key: "rule", label: "Rule", value: (a) => ruleName(a.rule) },
    { key: "domain", label: "Domain", value: (a) => a.domain ?? "" },
    { key: "days", label: "Day", value: (a) => alertDays(a) },
    {
      key: "summary",
      label: "Summary",
      wrap: true,
      value: (a) => a.summary,
      render: (a) => (
        <button
          type="button"
          class="link-button"
          aria-pressed={chosen?.id === a.id}
          onClick={() => setParams({ alert: a.id })}
        >
          {a.summary}
        </button>
      ),
    },
    {
      key: "state",
      label: "State",
      value: (a) => (a.acknowledged_at ? "acknowledged" : "open"),
    },
  ];
  return (
    <>
      <section class="filters" aria-label="Alert filters">
        <label class="field field-inline">
          <span>Rule</span>
          <select
            value={rule ?? ""}
            onChange={(e) =>
              setParams({ rule: (e.currentTarget as HTMLSelectElement).value || null, alert: null })
            }
          >
            <option value="">All rules</option>
            {rules.map(({ rule: kind }) => (
              <option key={kind} value={kind}>
                {ruleName(kind)}
              </option>
            ))}
            {rule && !rules.some((r) => r.rule === rule) ? (
              <option value={rule}>{ruleName(rule)}</option>
            ) : null}
          </select>
        </label>
        <label class="field field-inline">
          <span>State</span>
          <select
            value={state}
            onChange={(e) => setParams({ state: (e.currentTarget as HTMLSelectElement).value, alert: null })}
          >
            <option value="open">Open</option>
            <option value="acknowledged">Acknowledged</option>
            <option value="all">Open and acknowledged</option>
          </select>
        </label>
      </section>
      <div class={chosen ? "view split" : "view"}>
        <Card title="Alerts" id="alert-list" wide={!chosen}>
          {alerts.error ? <ErrorNotice error={alerts.error} /> : null}
          {alerts.loading && !alerts.data ? (
            <Loading what="the alerts" />
          ) : (
            <DataTable
              id="alerts"
              caption="Alerts, newest first"
              columns={columns}
              rows={records}
              rowKey={(a) => a.id}
              defaultSort="-raised"
              csvName="alerts.csv"
              selected={chosen?.id ?? null}
              empty={
                <EmptyState
                  title={`No ${state === "all" ? "" : `${state} `}alerts for ${describePeriod(filters.period)}`}
                >
                  Alerts are raised on recent report days; choose another period, rule or state.
                </EmptyState>
              }
            />
          )}
        </Card>
        {chosen ? <AlertDetail alert={chosen} canWrite={canWrite} you={caller.user?.id ?? null} /> : null}
        <AlertRules canWrite={canWrite} />
        <Webhooks canWrite={canWrite} />
      </div>
    </>
  );
}

/** One alert: what it says, its figures and members in words, where to look, and acknowledging it. */
function AlertDetail({
  alert,
  canWrite,
  you,
}: {
  alert: AlertRecord;
  canWrite: boolean;
  you: string | null;
}) {
  const action = useAction();
  const target = alertTarget(alert);
  const figures = Object.entries(alert.figures);
  return (
    <Card
      title={ruleName(alert.rule)}
      id="alert-detail"
      actions={
        <button type="button" class="link-button" onClick={() => setParams({ alert: null })}>
          Close
        </button>
      }
    >
      <p>{alert.summary}</p>
      <dl class="facts">
        <dt>Domain</dt>
        <dd>{alert.domain ?? "the account"}</dd>
        <dt>{alert.period.start.slice(0, 10) === alert.period.end.slice(0, 10) ? "Day" : "Days"}</dt>
        <dd>
          {alertDays(alert)}
          {alert.so_far ? " (so far: the day's reports may still arrive)" : ""}
        </dd>
        <dt>Raised</dt>
        <dd>{formatTime(alert.raised_at)}</dd>
        <dt>State</dt>
        <dd>
          {alert.acknowledged_at
            ? `acknowledged ${formatTime(alert.acknowledged_at)} ${acknowledgedBy(alert.acknowledged_by, you)}`
            : "open"}
        </dd>
        {figures.map(([name, value]) => (
          <Fragment key={name}>
            <dt>{fieldLabel(name)}</dt>
            <dd>{fieldValue(name, value)}</dd>
          </Fragment>
        ))}
      </dl>
      {alert.revises ? <p class="hint">This alert updates an earlier one of the same finding.</p> : null}
      {alert.items.length > 0 ? <AlertItems items={alert.items} /> : null}
      <p>
        <AppLink href={target.href}>{target.label}</AppLink>
      </p>
      <ErrorNotice error={action.error} />
      {canWrite && !alert.acknowledged_at ? (
        <button
          type="button"
          class="button button-primary"
          onClick={() => action.run(() => apiWrite("PUT", "acknowledge_alert", { alert_id: alert.id }))}
        >
          Acknowledge
        </button>
      ) : null}
    </Card>
  );
}

/** Who acknowledged it, as the person reading it knows them. */
function acknowledgedBy(by: string | null, you: string | null): string {
  if (by !== null && you !== null && by === `user:${you}`) return "by you";
  if (by?.startsWith("key:")) return "with an API key";
  return "by another person of the account";
}

/** The finding's members (each new sender, …): one row each, a column per field they have. */
function AlertItems({ items }: { items: Record<string, AlertValue>[] }) {
  const names = [...new Set(items.flatMap((item) => Object.keys(item)))];
  const columns: Column<Record<string, AlertValue>>[] = names.map((name) => ({
    key: name,
    label: fieldLabel(name),
    numeric: items.every((item) => item[name] === undefined || typeof item[name] === "number"),
    value: (item) => {
      const value = item[name];
      return typeof value === "number" ? value : value === undefined ? null : fieldValue(name, value);
    },
    render: (item) => fieldValue(name, item[name] ?? null),
  }));
  return (
    <DataTable
      id="alertitems"
      caption="What the alert found, one row each"
      columns={columns}
      rows={items}
      rowKey={(item) => JSON.stringify(item)}
      pageSize={10}
      csvName="alert-items.csv"
    />
  );
}
