import { useState } from "preact/hooks";
import { type ApiError, apiWrite, asApiError } from "../api/client.js";
import type {
  Caller,
  DomainStatus,
  HistoryRecord,
  ListAnswer,
  SafeSpf,
  TenantDomainRecord,
} from "../api/types.js";
import { forgetAnswers, useApi } from "../api/use-api.js";
import { Card } from "../components/card.js";
import { type Column, DataTable } from "../components/data-table.js";
import { EmptyState } from "../components/empty-state.js";
import { useTenantDomains } from "../components/filters-bar.js";
import { ErrorNotice, Loading, Notice } from "../components/notice.js";
import { useFilters } from "../lib/filters.js";
import { formatTime } from "../lib/format.js";
import { setParams, withParams } from "../lib/router.js";
import { AppLink } from "./app-link.js";
import { PublishRua } from "./publish-rua.js";

function useWrite() {
  const [error, setError] = useState<ApiError | undefined>();
  const [done, setDone] = useState<string | undefined>();
  const run = async <T,>(work: () => Promise<T>, success: string | ((answer: T) => string)) => {
    try {
      const answer = await work();
      setError(undefined);
      setDone(typeof success === "string" ? success : success(answer));
      forgetAnswers();
      return true;
    } catch (caught) {
      setDone(undefined);
      setError(asApiError(caught));
      return false;
    }
  };
  return { error, done, run };
}

function AddDomain() {
  const [domain, setDomain] = useState("");
  const write = useWrite();
  return (
    <form
      class="inline-form"
      onSubmit={async (event) => {
        event.preventDefault();
        const name = domain.trim();
        const added = (answer: { added: boolean }) =>
          answer.added ? `${name} added.` : `${name} is already one of your domains.`;
        if (
          await write.run(() => apiWrite<{ added: boolean }>("PUT", "add-domain", { domain: name }), added)
        ) {
          setDomain("");
          setParams({ domain: name.toLowerCase() });
        }
      }}
    >
      <label class="field">
        <span>Domain name</span>
        <input
          type="text"
          name="domain"
          value={domain}
          placeholder="example.com"
          required
          autoComplete="off"
          onInput={(event) => setDomain((event.currentTarget as HTMLInputElement).value)}
        />
      </label>
      <button type="submit" class="button button-primary">
        Add domain
      </button>
      <ErrorNotice error={write.error} />
      {write.done ? <Notice kind="success">{write.done}</Notice> : null}
    </form>
  );
}

function GroupForm({ domain, group }: { domain: string; group: string | null }) {
  const [value, setValue] = useState(group ?? "");
  const write = useWrite();
  return (
    <form
      class="inline-form"
      onSubmit={(event) => {
        event.preventDefault();
        write.run(
          () => apiWrite("PUT", "domain_group", { domain, group: value.trim() }),
          value.trim() ? `Group set to ${value.trim()}.` : "Group removed.",
        );
      }}
    >
      <label class="field">
        <span>Group</span>
        <input
          type="text"
          value={value}
          placeholder="none"
          onInput={(e) => setValue((e.currentTarget as HTMLInputElement).value)}
        />
      </label>
      <button type="submit" class="button">
        Save group
      </button>
      <ErrorNotice error={write.error} />
      {write.done ? <Notice kind="success">{write.done}</Notice> : null}
    </form>
  );
}

function OnboardingCheck({ domain }: { domain: string }) {
  const status = useApi<DomainStatus & { status: string }>("domain_status", { domain });
  if (status.loading && !status.data) return <Loading what="the onboarding check (live DNS)" />;
  if (status.error) return <Notice kind="error">The check could not run: {status.error.message}</Notice>;
  const check = status.data!;
  return (
    <div>
      <p>
        {check.ok ? (
          <strong class="good">Nothing to change.</strong>
        ) : (
          <strong class="bad">
            {check.problems.length} thing{check.problems.length === 1 ? "" : "s"} to change:
          </strong>
        )}{" "}
        <span class="muted">Checked {formatTime(check.checked_at)} from live DNS.</span>
      </p>
      {check.problems.length > 0 ? (
        <ul class="problems">
          {check.problems.map((problem) => (
            <li key={problem.code}>{problem.message}</li>
          ))}
        </ul>
      ) : null}
      <dl class="facts">
        <dt>DMARC record</dt>
        <dd>
          <code>{check.dmarc.record ?? "none"}</code>
        </dd>
        <dt>Policy</dt>
        <dd>{check.dmarc.policy ?? "–"}</dd>
        <dt>SPF record</dt>
        <dd>
          <code>{check.spf.record ?? "none"}</code>
        </dd>
        <dt>SPF lookups</dt>
        <dd>{check.spf.lookups ?? "–"}</dd>
      </dl>
    </div>
  );
}

function SafeSpfPanel({ domain, canWrite }: { domain: string; canWrite: boolean }) {
  const state = useApi<{ safe_spf: SafeSpf | null }>("safe_spf", { domain });
  const [original, setOriginal] = useState("");
  const write = useWrite();
  if (state.loading && !state.data) return <Loading what="Safe SPF" />;
  if (state.error) return <ErrorNotice error={state.error} />;
  const spf = state.data?.safe_spf ?? null;
  return (
    <div>
      {spf ? (
        <dl class="facts">
          <dt>Original</dt>
          <dd>
            <code>{spf.original}</code>
          </dd>
          <dt>Status</dt>
          <dd>
            {spf.status}
            {spf.refresh ? ` · ${spf.refresh}` : ""}
          </dd>
          <dt>Lookups</dt>
          <dd>
            {spf.lookups_before ?? "–"} in the original, {spf.lookups_after ?? "–"} published
          </dd>
          <dt>Last refresh</dt>
          <dd>{formatTime(spf.last_checked ?? spf.last_computed)}</dd>
          <dt>Next refresh</dt>
          <dd>{formatTime(spf.next_check)}</dd>
          {spf.last_error ? (
            <>
              <dt>Last error</dt>
              <dd class="bad">{spf.last_error}</dd>
            </>
          ) : null}
          <dt>Published</dt>
          <dd>
            {spf.records.length === 0 ? (
              "–"
            ) : (
              <ul class="records">
                {spf.records.map((record) => (
                  <li key={record.name}>
                    <code>
                      {record.name} TXT "{record.value}"
                    </code>
                  </li>
                ))}
              </ul>
            )}
          </dd>
        </dl>
      ) : (
        <p class="muted">
          No SPF record submitted yet: Safe SPF keeps a flattened copy of it within the 10-lookup limit.
        </p>
      )}
      {canWrite ? (
        <form
          class="stack-form"
          onSubmit={(event) => {
            event.preventDefault();
            write.run(
              () => apiWrite("PUT", "update_safe_spf", { domain, original }),
              "Submitted; it is being computed.",
            );
          }}
        >
          <label class="field">
            <span>Original SPF record</span>
            <input
              type="text"
              value={original}
              placeholder="v=spf1 include:_spf.google.com ~all"
              required
              onInput={(e) => setOriginal((e.currentTarget as HTMLInputElement).value)}
            />
          </label>
          <button type="submit" class="button">
            Submit SPF record
          </button>
          <ErrorNotice error={write.error} />
          {write.done ? <Notice kind="success">{write.done}</Notice> : null}
        </form>
      ) : null}
    </div>
  );
}

/** Who caused an event when no address names them: a key, the service, or a former member. */
function causedBy(who: string): string {
  if (who.startsWith("user:")) return "a person no longer in the account";
  if (who.startsWith("key:")) return `API key ${who.slice(4)}`;
  if (who.startsWith("process:")) return `the service (${who.slice(8)})`;
  return who;
}

function History({ domain }: { domain: string }) {
  const history = useApi<ListAnswer<HistoryRecord>>("history", { domain, per_page: 1000 });
  if (history.loading && !history.data) return <Loading what="the history" />;
  if (history.error) return <ErrorNotice error={history.error} />;
  const columns: Column<HistoryRecord>[] = [
    { key: "time", label: "Time", value: (r) => r.Time, render: (r) => formatTime(r.Time) },
    { key: "event", label: "Event", value: (r) => r.Event },
    { key: "what", label: "What", value: (r) => r.Description, wrap: true },
    { key: "who", label: "By", value: (r) => r.CausedByEmail ?? causedBy(r.CausedBy) },
  ];
  return (
    <DataTable
      id="history"
      caption={`History of ${domain}`}
      columns={columns}
      rows={history.data?.records ?? []}
      rowKey={(r) => r.Revision}
      defaultSort="-time"
      csvName={`history-${domain}.csv`}
      pageSize={10}
    />
  );
}

/** The tenant's domains: add one, group them, and for one its onboarding check, Safe SPF and history. */
export function Domains({ caller }: { caller: Caller }) {
  const { domain } = useFilters();
  const domains = useTenantDomains();
  const canWrite = caller.capabilities.includes("write");
  if (domains.loading && !domains.data) return <Loading what="the domains" />;
  if (domains.error) return <ErrorNotice error={domains.error} />;
  const records = domains.data?.records ?? [];
  const chosen = records.find((r) => r.Domain === domain) ?? null;
  const columns: Column<TenantDomainRecord>[] = [
    {
      key: "domain",
      label: "Domain",
      value: (r) => r.Domain,
      render: (r) => (
        <AppLink href={withParams({ domain: r.Domain })} current={r.Domain === domain}>
          {r.Domain}
        </AppLink>
      ),
    },
    { key: "group", label: "Group", value: (r) => r.DomainGroup },
    { key: "added", label: "Added", value: (r) => r.Added, render: (r) => formatTime(r.Added) },
    { key: "safespf", label: "Safe SPF", value: (r) => r.SafeSpfStatus },
  ];
  return (
    <div class="view">
      {canWrite ? (
        <Card title="Add a domain" id="add-domain">
          <AddDomain />
          <PublishRua caller={caller} />
        </Card>
      ) : null}
      <Card title="Domains" id="domains-list" wide={!canWrite}>
        <DataTable
          id="domainlist"
          caption="Your domains"
          columns={columns}
          rows={records}
          rowKey={(r) => r.Domain}
          defaultSort="domain"
          csvName="domains.csv"
          empty={
            <EmptyState title="No domains yet">
              {canWrite
                ? "Add the domains you send mail from above."
                : "An admin of your account adds domains."}
            </EmptyState>
          }
        />
      </Card>
      {chosen ? (
        <>
          <Card title={`Onboarding check of ${chosen.Domain}`} id="onboarding">
            <OnboardingCheck domain={chosen.Domain} />
          </Card>
          <Card title="Safe SPF" id="safe-spf">
            <SafeSpfPanel domain={chosen.Domain} canWrite={canWrite} />
          </Card>
          {canWrite ? (
            <Card title="Group" id="group">
              <GroupForm key={chosen.Domain} domain={chosen.Domain} group={chosen.DomainGroup} />
            </Card>
          ) : null}
          <Card title="History" id="history-card" wide>
            <History domain={chosen.Domain} />
          </Card>
        </>
      ) : records.length > 0 ? (
        <Notice>Choose a domain for its onboarding check, Safe SPF record and history.</Notice>
      ) : null}
    </div>
  );
}
