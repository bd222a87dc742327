import { useRef, useState } from "preact/hooks";
import { ApiError, apiWrite, asApiError } from "../api/client.js";
import type { Caller, InputItem, InputRecord, ListAnswer } from "../api/types.js";
import { forgetAnswers, useApi } from "../api/use-api.js";
import { Card } from "../components/card.js";
import { type Column, DataTable } from "../components/data-table.js";
import { EmptyState } from "../components/empty-state.js";
import { useTenantDomains } from "../components/filters-bar.js";
import { ErrorNotice, Loading, Notice } from "../components/notice.js";
import { useFilters } from "../lib/filters.js";
import { formatBytes, formatCount, formatTime } from "../lib/format.js";
import { describePeriod } from "../lib/period.js";
import { setParams, useLocation } from "../lib/router.js";

interface UploadAnswer {
  outcome: "stored" | "duplicate" | "rejected";
  items: InputItem[];
}

function describeItem(item: InputItem, own?: readonly string[]): string {
  if (item.kind === "rejected") return `rejected (${item.code}): ${item.reason}`;
  const size =
    item.kind === "aggregate"
      ? `, ${formatCount(item.rows ?? 0)} rows, ${formatCount(item.messages ?? 0)} messages`
      : "";
  const described = `${item.kind} report for ${item.domain}${size}: ${item.status}`;
  return own && item.domain && !isOwn(item.domain, own)
    ? `${described} (${item.domain} is not one of your domains: no view of yours counts it)`
    : described;
}

/** A report counts for the account that has its domain or a parent of it (docs/api.md). */
const isOwn = (domain: string, own: readonly string[]) =>
  own.some((mine) => domain.toLowerCase() === mine || domain.toLowerCase().endsWith(`.${mine}`));

/** One uploaded file: the service's answer, or why there is none. */
type UploadResult = { name: string; ok: boolean } & ({ answer: UploadAnswer } | { text: string });

/** Reports by drag and drop (or a file picker): each file goes to POST /api/reports as it is. */
function Upload({ ownDomains }: { ownDomains: readonly string[] | undefined }) {
  const [over, setOver] = useState(false);
  // Each file's answer is described when shown: the tenant's domains may load after the upload.
  const [results, setResults] = useState<UploadResult[]>([]);
  const [busy, setBusy] = useState(false);
  const picker = useRef<HTMLInputElement>(null);
  const send = async (files: FileList | null) => {
    if (!files || files.length === 0) return;
    setBusy(true);
    const done: typeof results = [];
    for (const file of Array.from(files)) {
      try {
        const answer = await apiWrite<UploadAnswer>("POST", "reports", file);
        done.push({ name: file.name, ok: answer.outcome !== "rejected", answer });
      } catch (error) {
        done.push({
          name: file.name,
          ok: false,
          text: error instanceof ApiError ? error.message : String(error),
        });
      }
    }
    setResults(done);
    setBusy(false);
    forgetAnswers();
  };
  return (
    <div>
      {/* biome-ignore lint/a11y/noStaticElementInteractions: dropping is for a pointer; the keyboard's way is the file button inside */}
      <div
        class={`dropzone${over ? " dropzone-over" : ""}`}
        onDragOver={(event) => {
          event.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(event) => {
          event.preventDefault();
          setOver(false);
          send(event.dataTransfer?.files ?? null);
        }}
      >
        <p>
          <strong>Drop report files here</strong>: aggregate XML, gzip, zip, or whole mails (.eml).
        </p>
        <label class="button">
          Choose files
          <input
            ref={picker}
            class="visually-hidden"
            type="file"
            multiple
            onChange={(event) => send((event.currentTarget as HTMLInputElement).files)}
          />
        </label>
        {busy ? <p role="status">Uploading…</p> : null}
      </div>
      {results.length > 0 ? (
        <ul class="upload-results" aria-live="polite">
          {results.map((result) => (
            <li key={result.name} class={result.ok ? "good" : "bad"}>
              <strong>{result.name}</strong>:{" "}
              {"answer" in result
                ? `${result.answer.outcome}: ${result.answer.items.map((item) => describeItem(item, ownDomains)).join("; ")}`
                : result.text}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

const outcomes = ["stored", "duplicate", "rejected", "received"] as const;

/** Inputs received for the tenant's domains (and its uploads), what became of them, and why. */
/** The mail channels reports arrive by here, in words: none that is off is named. */
function byMail(mail: Caller["mail_intake"]): string {
  if (!mail) return "by mail, ";
  const channels = [mail.smtp ? "SMTP" : null, mail.imap ? "IMAP" : null].filter(Boolean);
  return channels.length > 0 ? `by mail (${channels.join(" or ")}), ` : "";
}

export function Intake({ caller }: { caller: Caller }) {
  const filters = useFilters();
  const { params } = useLocation();
  const status = outcomes.find((o) => o === params.get("status")) ?? null;
  const inputs = useApi<ListAnswer<InputRecord>>("inputs", { ...filters.query, status, per_page: 1000 });
  const canIngest = caller.capabilities.includes("ingest");
  const ownDomains = useTenantDomains().data?.records.map((record) => record.Domain);
  const [problem, setProblem] = useState<ApiError | undefined>();
  const [done, setDone] = useState<string | undefined>();
  const reprocess = async (input: InputRecord) => {
    try {
      const answer = await apiWrite<{ outcome: string; reason: string | null }>("PUT", "reprocess_input", {
        sha256: input.Sha256,
      });
      setProblem(undefined);
      setDone(`Processed again: ${answer.outcome}${answer.reason ? ` (${answer.reason})` : ""}.`);
      forgetAnswers();
    } catch (error) {
      setDone(undefined);
      setProblem(asApiError(error));
    }
  };
  const columns: Column<InputRecord>[] = [
    {
      key: "received",
      label: "Last received",
      value: (r) => r.LastSeen,
      render: (r) => formatTime(r.LastSeen),
    },
    { key: "channel", label: "Channel", value: (r) => r.Channel },
    {
      key: "outcome",
      label: "Outcome",
      value: (r) => r.Outcome,
      render: (r) => <span class={`badge badge-${r.Outcome}`}>{r.Outcome}</span>,
    },
    {
      key: "reports",
      label: "Reports",
      wrap: true,
      value: (r) =>
        r.Items.filter((i) => i.kind !== "rejected")
          .map((item) => describeItem(item))
          .join("; ") || null,
    },
    { key: "reason", label: "Reason", value: (r) => r.Reason, wrap: true },
    { key: "size", label: "Size", numeric: true, value: (r) => r.Bytes, render: (r) => formatBytes(r.Bytes) },
    { key: "times", label: "Times received", numeric: true, value: (r) => r.TimesReceived },
    ...(canIngest
      ? [
          {
            key: "action",
            label: "Action",
            value: () => null,
            render: (r: InputRecord) =>
              r.Outcome === "rejected" || r.Outcome === "received" ? (
                <button type="button" class="link-button" onClick={() => reprocess(r)}>
                  Process again
                </button>
              ) : null,
          } satisfies Column<InputRecord>,
        ]
      : []),
  ];
  return (
    <div class="view">
      {canIngest ? (
        <Card title="Upload reports" id="upload" wide>
          <Upload ownDomains={ownDomains} />
        </Card>
      ) : null}
      <Card
        title="Received inputs"
        id="inputs-card"
        wide
        actions={
          <label class="field field-inline">
            <span>Outcome</span>
            <select
              value={status ?? ""}
              onChange={(event) =>
                setParams({ status: (event.currentTarget as HTMLSelectElement).value || null })
              }
            >
              <option value="">All</option>
              {outcomes.map((o) => (
                <option key={o} value={o}>
                  {o}
                </option>
              ))}
            </select>
          </label>
        }
      >
        <ErrorNotice error={problem} />
        {done ? <Notice kind="success">{done}</Notice> : null}
        {inputs.loading && !inputs.data ? (
          <Loading what="the inputs" />
        ) : inputs.error ? (
          <ErrorNotice error={inputs.error} />
        ) : (
          <DataTable
            id="inputs"
            caption="Received inputs, with their outcome and reason"
            columns={columns}
            rows={inputs.data?.records ?? []}
            rowKey={(r) => r.Sha256}
            defaultSort="-received"
            csvName="inputs.csv"
            note={
              Number(inputs.data?.total ?? 0) > (inputs.data?.records.length ?? 0)
                ? `the latest ${formatCount(inputs.data?.records.length ?? 0)} of ${formatCount(inputs.data?.total ?? 0)}`
                : undefined
            }
            empty={
              <EmptyState title={`Nothing arrived in ${describePeriod(filters.period)}`}>
                Inputs are listed by when they arrived. Reports arrive {byMail(caller.mail_intake)}by upload
                here or through the API, or with <code>dmarc-ledger import</code>.
                {caller.mail_intake && !caller.mail_intake.smtp && !caller.mail_intake.imap
                  ? " No mail reaches this service: its mail intake is not set up."
                  : null}
              </EmptyState>
            }
          />
        )}
      </Card>
    </div>
  );
}
