import { useState } from "preact/hooks";
import { apiWrite } from "../api/client.js";
import type { AlertRuleRecord, ListAnswer, WebhookRecord } from "../api/types.js";
import { useApi } from "../api/use-api.js";
import { Card } from "../components/card.js";
import { type Column, DataTable } from "../components/data-table.js";
import { ErrorNotice, Loading } from "../components/notice.js";
import { paramLabel, ruleName } from "../lib/alert-words.js";
import { formatTime } from "../lib/format.js";
import { setParams, useLocation } from "../lib/router.js";
import { WebhookDeliveries, webhookState } from "./webhook-deliveries.js";
import { ShownOnce, useAction } from "./write-actions.js";

const ruleWords = (rule: string) => rule.replaceAll("_", " ");

/** The parameters of a rule a person sets by number: every one but `email`, which is a switch. */
const thresholds = (rule: AlertRuleRecord) =>
  Object.entries(rule.params).filter(([name]) => name !== "email");

/** Sets a rule as it is with some of it changed: on or off, e-mail, a threshold. */
const setRule = (rule: AlertRuleRecord, change: { enabled?: boolean; params?: Record<string, number> }) =>
  apiWrite("PUT", "set_alert_rule", {
    rule: rule.rule,
    enabled: String(change.enabled ?? rule.enabled),
    params: JSON.stringify({ ...rule.params, ...change.params }),
  });

/**
 * The account's alert rules (docs/alerts.md): each on or off, mailed or not, and its thresholds
 * edited in a form of their own.
 */
export function AlertRules({ canWrite }: { canWrite: boolean }) {
  const rules = useApi<ListAnswer<AlertRuleRecord>>("alert_rules");
  const action = useAction();
  const [editing, setEditing] = useState<string | null>(null);
  const edited = rules.data?.records.find((r) => r.rule === editing) ?? null;
  const columns: Column<AlertRuleRecord>[] = [
    { key: "rule", label: "Rule", value: (r) => ruleName(r.rule) },
    { key: "what", label: "Raised when", value: (r) => r.description, wrap: true },
    {
      key: "params",
      label: "Thresholds",
      value: (r) =>
        thresholds(r)
          .map(([name, value]) => `${paramLabel(name)}: ${value}`)
          .join(", "),
      wrap: true,
      render: (r) => (
        <span class="row-actions">
          <span>
            {thresholds(r)
              .map(([name, value]) => `${paramLabel(name)}: ${value}`)
              .join(", ") || "–"}
          </span>
          {canWrite && thresholds(r).length > 0 ? (
            <button
              type="button"
              class="link-button"
              aria-label={`Edit thresholds: ${ruleWords(r.rule)}`}
              onClick={() => setEditing(r.rule)}
            >
              Edit
            </button>
          ) : null}
        </span>
      ),
    },
    {
      key: "email",
      label: "E-mail",
      value: (r) => (r.params.email === 0 ? "off" : "on"),
      render: (r) =>
        canWrite ? (
          <input
            type="checkbox"
            aria-label={`E-mail: ${ruleWords(r.rule)}`}
            checked={r.params.email !== 0}
            onChange={(event) =>
              action.run(() =>
                setRule(r, { params: { email: (event.currentTarget as HTMLInputElement).checked ? 1 : 0 } }),
              )
            }
          />
        ) : r.params.email === 0 ? (
          "off"
        ) : (
          "on"
        ),
    },
    {
      key: "on",
      label: "On",
      value: (r) => (r.enabled ? "on" : "off"),
      render: (r) =>
        canWrite ? (
          <input
            type="checkbox"
            aria-label={`Alert: ${ruleWords(r.rule)}`}
            checked={r.enabled}
            onChange={(event) =>
              action.run(() => setRule(r, { enabled: (event.currentTarget as HTMLInputElement).checked }))
            }
          />
        ) : r.enabled ? (
          "on"
        ) : (
          "off"
        ),
    },
  ];
  return (
    <Card title="Alert rules" id="alert-rules" wide>
      <ErrorNotice error={action.error} />
      {rules.loading && !rules.data ? (
        <Loading what="the alert rules" />
      ) : (
        <DataTable
          id="alertrules"
          caption="What raises an alert (each goes to the webhooks below and, with e-mail on, to the account's people)"
          columns={columns}
          rows={rules.data?.records ?? []}
          rowKey={(r) => r.rule}
          defaultSort="rule"
          csvName="alert-rules.csv"
        />
      )}
      {edited && canWrite ? (
        <RuleForm
          key={edited.rule}
          rule={edited}
          onDone={async (params) => {
            if (await action.run(() => setRule(edited, { params }))) setEditing(null);
          }}
          onCancel={() => setEditing(null)}
        />
      ) : null}
    </Card>
  );
}

/** One rule's thresholds, each a number the API checks (its message names every wrong one). */
function RuleForm({
  rule,
  onDone,
  onCancel,
}: {
  rule: AlertRuleRecord;
  onDone: (params: Record<string, number>) => void;
  onCancel: () => void;
}) {
  const [values, setValues] = useState<Record<string, string>>(
    Object.fromEntries(thresholds(rule).map(([name, value]) => [name, String(value)])),
  );
  return (
    <form
      class="inline-form"
      aria-label={`Thresholds of ${ruleName(rule.rule)}`}
      onSubmit={(event) => {
        event.preventDefault();
        onDone(Object.fromEntries(Object.entries(values).map(([name, value]) => [name, Number(value)])));
      }}
    >
      <h3>{ruleName(rule.rule)}</h3>
      {Object.entries(values).map(([name, value]) => (
        <label key={name} class="field">
          <span>{paramLabel(name)}</span>
          <input
            type="number"
            required
            step="any"
            value={value}
            onInput={(e) => setValues({ ...values, [name]: (e.currentTarget as HTMLInputElement).value })}
          />
        </label>
      ))}
      <button type="submit" class="button button-primary">
        Save thresholds
      </button>
      <button type="button" class="button" onClick={onCancel}>
        Cancel
      </button>
    </form>
  );
}

const stateText = (r: WebhookRecord) => {
  const state = webhookState(r);
  return state.detail ? `${state.word}: ${state.detail}` : state.word;
};

/**
 * Webhook endpoints: add one (its secret shown once), turn one off or on again; each with its
 * health (an endpoint whose deliveries fail shows as failing) and its delivery log.
 */
export function Webhooks({ canWrite }: { canWrite: boolean }) {
  const hooks = useApi<ListAnswer<WebhookRecord>>("webhooks");
  const { params } = useLocation();
  const action = useAction();
  const [url, setUrl] = useState("");
  const [types, setTypes] = useState("");
  const [secret, setSecret] = useState<string | null>(null);
  const shown = hooks.data?.records.find((r) => r.id === params.get("webhook")) ?? null;
  const columns: Column<WebhookRecord>[] = [
    { key: "url", label: "URL", value: (r) => r.url, wrap: true },
    { key: "types", label: "Alerts", value: (r) => r.alert_types.map(ruleName).join(", ") || "all" },
    {
      key: "state",
      label: "State",
      value: stateText,
      wrap: true,
      render: (r) => (
        <span class="row-actions">
          <span class={webhookState(r).bad ? "bad" : ""}>{stateText(r)}</span>
          {canWrite ? (
            <button
              type="button"
              class={r.enabled && !r.paused_at ? "link-button danger" : "link-button"}
              onClick={() =>
                action.run(() =>
                  // A paused endpoint is resumed by enabling it: what waits is sent then.
                  apiWrite("PUT", "change_webhook", {
                    webhook_id: r.id,
                    enabled: String(!r.enabled || r.paused_at !== null),
                  }),
                )
              }
            >
              {r.paused_at ? "Resume" : r.enabled ? "Disable" : "Enable"}
            </button>
          ) : null}
        </span>
      ),
    },
    {
      key: "success",
      label: "Last success",
      value: (r) => r.health.last_success_at,
      render: (r) => formatTime(r.health.last_success_at),
    },
    {
      key: "failure",
      label: "Last failure",
      value: (r) => r.health.last_failure,
      render: (r) =>
        r.health.last_failure ? `${r.health.last_failure}, ${formatTime(r.health.last_failure_at)}` : "–",
      wrap: true,
    },
    { key: "pending", label: "Waiting", numeric: true, value: (r) => r.health.pending },
    {
      key: "log",
      label: "Deliveries",
      value: () => null,
      render: (r) => (
        <button
          type="button"
          class="link-button"
          aria-pressed={shown?.id === r.id}
          onClick={() => setParams({ webhook: r.id })}
        >
          Deliveries
        </button>
      ),
    },
  ];
  return (
    <>
      <Card title="Webhooks" id="webhooks" wide>
        {canWrite ? (
          <form
            class="inline-form"
            onSubmit={async (event) => {
              event.preventDefault();
              const answer = await action.run(() =>
                apiWrite<{ webhook_id: string; secret: string }>("PUT", "add_webhook", {
                  url,
                  alert_types: types,
                }),
              );
              if (answer) {
                setSecret(answer.secret);
                setUrl("");
                setTypes("");
              }
            }}
          >
            <label class="field">
              <span>Webhook URL</span>
              <input
                type="url"
                required
                value={url}
                placeholder="https://hooks.example.com/dmarc"
                onInput={(e) => setUrl((e.currentTarget as HTMLInputElement).value)}
              />
            </label>
            <label class="field">
              <span>Only these rules (comma-separated; empty: all)</span>
              <input
                type="text"
                value={types}
                placeholder="new_sender, dmarc_failure_share"
                onInput={(e) => setTypes((e.currentTarget as HTMLInputElement).value)}
              />
            </label>
            <button type="submit" class="button button-primary">
              Add webhook
            </button>
          </form>
        ) : null}
        <ErrorNotice error={action.error} />
        {secret ? (
          <ShownOnce
            label="Signing secret"
            value={secret}
            note="shown this once: the receiver verifies each delivery with it (Standard Webhooks)."
          />
        ) : null}
        <DataTable
          id="webhooks"
          caption="Where alerts are sent, signed"
          columns={columns}
          rows={hooks.data?.records ?? []}
          rowKey={(r) => r.id}
          defaultSort="url"
          csvName="webhooks.csv"
        />
      </Card>
      {shown ? <WebhookDeliveries hook={shown} canWrite={canWrite} /> : null}
    </>
  );
}
