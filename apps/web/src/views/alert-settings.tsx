import { useState } from "preact/hooks";
import { apiWrite } from "../api/client.js";
import type { AlertRuleRecord, ListAnswer, WebhookRecord } from "../api/types.js";
import { useApi } from "../api/use-api.js";
import { Card } from "../components/card.js";
import { type Column, DataTable } from "../components/data-table.js";
import { ErrorNotice, Loading } from "../components/notice.js";
import { formatTime } from "../lib/format.js";
import { ShownOnce, useAction } from "./write-actions.js";

const ruleWords = (rule: string) => rule.replaceAll("_", " ");

/** The account's alert rules (docs/alerts.md): on or off; the parameters through the API or CLI. */
export function AlertRules({ canWrite }: { canWrite: boolean }) {
  const rules = useApi<ListAnswer<AlertRuleRecord>>("alert_rules");
  const action = useAction();
  const columns: Column<AlertRuleRecord>[] = [
    { key: "rule", label: "Rule", value: (r) => ruleWords(r.rule) },
    { key: "what", label: "Raised when", value: (r) => r.description, wrap: true },
    {
      key: "params",
      label: "Parameters",
      value: (r) =>
        Object.entries(r.params)
          .filter(([name]) => name !== "email")
          .map(([name, value]) => `${name.replaceAll("_", " ")} ${value}`)
          .join(", "),
      wrap: true,
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
              action.run(() =>
                apiWrite("PUT", "set_alert_rule", {
                  rule: r.rule,
                  enabled: String((event.currentTarget as HTMLInputElement).checked),
                  params: JSON.stringify(r.params),
                }),
              )
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
          caption="What raises an alert (each goes to the webhooks below and by e-mail to the account's people)"
          columns={columns}
          rows={rules.data?.records ?? []}
          rowKey={(r) => r.rule}
          defaultSort="rule"
          csvName="alert-rules.csv"
        />
      )}
    </Card>
  );
}

/** Webhook endpoints: add one (its secret shown once), turn one off or on again. */
export function Webhooks({ canWrite }: { canWrite: boolean }) {
  const hooks = useApi<ListAnswer<WebhookRecord>>("webhooks");
  const action = useAction();
  const [url, setUrl] = useState("");
  const [types, setTypes] = useState("");
  const [secret, setSecret] = useState<string | null>(null);
  const columns: Column<WebhookRecord>[] = [
    { key: "url", label: "URL", value: (r) => r.url, wrap: true },
    { key: "types", label: "Alerts", value: (r) => r.alert_types.map(ruleWords).join(", ") || "all" },
    { key: "added", label: "Added", value: (r) => r.created_at, render: (r) => formatTime(r.created_at) },
    {
      key: "state",
      label: "State",
      value: (r) => (r.enabled ? "enabled" : `disabled${r.disabled_reason ? `: ${r.disabled_reason}` : ""}`),
      wrap: true,
      render: (r) => (
        <span class="row-actions">
          <span class={r.enabled ? "" : "muted"}>
            {r.enabled ? "enabled" : `disabled${r.disabled_reason ? `: ${r.disabled_reason}` : ""}`}
          </span>
          {canWrite ? (
            <button
              type="button"
              class={r.enabled ? "link-button danger" : "link-button"}
              onClick={() =>
                action.run(() =>
                  apiWrite("PUT", "change_webhook", { webhook_id: r.id, enabled: String(!r.enabled) }),
                )
              }
            >
              {r.enabled ? "Disable" : "Enable"}
            </button>
          ) : null}
        </span>
      ),
    },
  ];
  return (
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
        defaultSort="-added"
        csvName="webhooks.csv"
      />
    </Card>
  );
}
