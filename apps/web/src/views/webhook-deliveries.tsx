import { useState } from "preact/hooks";
import { apiWrite } from "../api/client.js";
import type { DeliveryRecord, ListAnswer, WebhookRecord } from "../api/types.js";
import { useApi } from "../api/use-api.js";
import { Card } from "../components/card.js";
import { type Column, DataTable } from "../components/data-table.js";
import { ErrorNotice, Loading, Notice } from "../components/notice.js";
import { formatTime } from "../lib/format.js";
import { setParams } from "../lib/router.js";
import { AppLink } from "./app-link.js";
import { useAction } from "./write-actions.js";

/**
 * How an endpoint stands: paused by the service (its deliveries kept until it is enabled again),
 * disabled, failing (every attempt since a time fails), working, or unused.
 */
export function webhookState(hook: WebhookRecord): { word: string; detail: string; bad: boolean } {
  if (hook.paused_at)
    return {
      word: "paused",
      detail: `since ${formatTime(hook.paused_at)}${hook.paused_reason ? `: ${hook.paused_reason}` : ""}; enable it to send what waits`,
      bad: true,
    };
  if (!hook.enabled) return { word: "disabled", detail: hook.disabled_reason ?? "", bad: true };
  const { health } = hook;
  if (health.failing_since) {
    return {
      word: "failing",
      detail: `since ${formatTime(health.failing_since)}${health.last_failure ? `: ${health.last_failure}` : ""}`,
      bad: true,
    };
  }
  if (health.last_success_at) return { word: "working", detail: "", bad: false };
  return { word: "enabled", detail: "nothing sent yet", bad: false };
}

const statusWords: Record<DeliveryRecord["status"], string> = {
  pending: "waiting to be sent",
  delivered: "delivered",
  failed: "gave up",
  endpoint_disabled: "endpoint disabled",
};

/** What the endpoint last answered: its HTTP status, or why there was no answer (a category). */
const lastAnswer = (d: DeliveryRecord) =>
  d.last_error ?? (d.last_status === null ? null : `HTTP ${d.last_status}`);

/** An endpoint's delivery log, newest first, each delivery sent again on request. */
export function WebhookDeliveries({ hook, canWrite }: { hook: WebhookRecord; canWrite: boolean }) {
  const deliveries = useApi<ListAnswer<DeliveryRecord>>("webhook_deliveries", {
    webhook_id: hook.id,
    per_page: 1000,
  });
  const action = useAction();
  const [resent, setResent] = useState<string | null>(null);
  const columns: Column<DeliveryRecord>[] = [
    { key: "made", label: "Made", value: (d) => d.created_at, render: (d) => formatTime(d.created_at) },
    {
      key: "alert",
      label: "Alert",
      value: (d) => d.alert_id,
      render: (d) => (
        <AppLink href={`/alerts?${new URLSearchParams({ period: "all", state: "all", alert: d.alert_id })}`}>
          {d.alert_id.slice(0, 16)}…
        </AppLink>
      ),
    },
    { key: "status", label: "Status", value: (d) => statusWords[d.status] ?? d.status },
    { key: "attempts", label: "Attempts", numeric: true, value: (d) => d.attempts },
    { key: "answer", label: "Last answer", value: lastAnswer },
    {
      key: "last",
      label: "Last attempt",
      value: (d) => d.last_attempt_at,
      render: (d) => formatTime(d.last_attempt_at),
    },
    {
      key: "next",
      label: "Next attempt",
      value: (d) => d.next_attempt_at,
      render: (d) => formatTime(d.next_attempt_at),
    },
    ...(canWrite
      ? [
          {
            key: "resend",
            label: "Resend",
            value: () => null,
            render: (d: DeliveryRecord) => (
              <button
                type="button"
                class="link-button"
                disabled={!hook.enabled}
                onClick={async () => {
                  if (await action.run(() => apiWrite("PUT", "redeliver_webhook", { delivery_id: d.id })))
                    setResent(d.id);
                }}
              >
                Resend
              </button>
            ),
          },
        ]
      : []),
  ];
  return (
    <Card
      title="Deliveries"
      id="webhook-deliveries"
      wide
      actions={
        <button type="button" class="link-button" onClick={() => setParams({ webhook: null })}>
          Close
        </button>
      }
    >
      <p class="hint">
        To {hook.url}: each alert sent to it, with the same webhook-id and body on every attempt.
        {hook.enabled ? "" : " Enable the endpoint to resend."}
      </p>
      <ErrorNotice error={action.error ?? deliveries.error} />
      {resent ? <Notice kind="success">Queued to be sent again: {resent}</Notice> : null}
      {deliveries.loading && !deliveries.data ? (
        <Loading what="the deliveries" />
      ) : (
        <DataTable
          id="deliveries"
          caption={`Deliveries to ${hook.url}, newest first`}
          columns={columns}
          rows={deliveries.data?.records ?? []}
          rowKey={(d) => d.id}
          defaultSort="-made"
          csvName="webhook-deliveries.csv"
          pageSize={10}
        />
      )}
    </Card>
  );
}
