import { useState } from "preact/hooks";
import { type ApiError, apiWrite, asApiError } from "../api/client.js";
import type { Caller, ListAnswer, SenderApprovalRecord, SenderRecord } from "../api/types.js";
import { forgetAnswers, useApi } from "../api/use-api.js";
import { Card } from "../components/card.js";
import { type Column, DataTable } from "../components/data-table.js";
import { EmptyState } from "../components/empty-state.js";
import { ErrorNotice, Loading, Notice } from "../components/notice.js";
import { addedText, useGrownApprovals } from "../lib/approval-growth.js";
import { useFilters } from "../lib/filters.js";
import { formatCount } from "../lib/format.js";
import { setParams, useLocation } from "../lib/router.js";
import { dkimAligned, messages, passShare, spfAligned } from "./columns.js";
import { SenderIps } from "./sender-ips.js";

const senderKey = (r: SenderRecord) => `${r.Domain}|${r.Service}`;

/**
 * The senders by service (issue 23's GET aggregate_by_sender): what each is, its network and
 * country, and whether the domain's owner approved it (PUT sender_approval, for admins). Shown
 * only once the API links aggregate_by_sender. An approved service that groups addresses it did
 * not group when approved says so (GET sender_approvals, when linked), and lists them.
 */
export function SenderInventory({
  caller,
  canApprove,
  showsGrowth,
}: {
  caller: Caller;
  canApprove: boolean;
  showsGrowth: boolean;
}) {
  const filters = useFilters();
  const senders = useApi<ListAnswer<SenderRecord>>("aggregate_by_sender", {
    ...filters.query,
    per_page: 1000,
  });
  const grown = useGrownApprovals(showsGrowth, filters.query);
  const { params } = useLocation();
  const [problem, setProblem] = useState<ApiError | undefined>();
  const admin = caller.capabilities.includes("write") && canApprove;
  if (senders.loading && !senders.data) return <Loading what="the senders" />;
  if (senders.error) return <ErrorNotice error={senders.error} />;
  const approve = async (row: Pick<SenderRecord, "Domain" | "Service">, approved: Decision) => {
    try {
      await apiWrite("PUT", "sender_approval", { domain: row.Domain, service: row.Service, approved });
      setProblem(undefined);
      forgetAnswers();
    } catch (error) {
      setProblem(asApiError(error));
    }
  };
  const approvalChoice = (r: SenderRecord) =>
    admin && r.SenderKind === "unknown" ? (
      // "unknown" is whatever nothing names: its addresses are approved by range, not as one.
      r.Approved === null ? (
        <span class="muted" title="Approve these addresses by IP range">
          –
        </span>
      ) : (
        <button type="button" class="link-button" onClick={() => approve(r, "clear")}>
          clear
        </button>
      )
    ) : admin ? (
      // Three choices, not a checkbox: "not decided" is a state of its own (Approved null),
      // which the API's "clear" returns to, and a checkbox could only say yes or no.
      <label class="approval">
        <span class="visually-hidden">
          Approval of {r.Service} for {r.Domain}
        </span>
        <select
          value={decisionOf(r.Approved)}
          onChange={(event) => approve(r, (event.currentTarget as HTMLSelectElement).value as Decision)}
        >
          <option value="clear">–</option>
          <option value="true">yes</option>
          <option value="false">no</option>
        </select>
      </label>
    ) : r.Approved === null ? (
      <span class="muted">–</span>
    ) : r.Approved ? (
      "yes"
    ) : (
      "no"
    );
  // Beside the decision: what the approval covers now that nobody saw when approving it.
  const growthBadge = (r: SenderRecord) => {
    const decision = grown.get(senderKey(r));
    return decision ? (
      <button
        type="button"
        class="badge badge-grown"
        aria-pressed={params.get("added") === senderKey(r)}
        onClick={() => setParams({ added: senderKey(r) })}
      >
        {addedText(decision.AddedCount!)}
      </button>
    ) : null;
  };
  const columns: Column<SenderRecord>[] = [
    {
      key: "service",
      label: "Service",
      value: (r) => r.Service,
      // Real names are long ("Google (Including Gmail and Google Workspace)"): they wrap, so
      // the table fits 1280 pixels.
      wrapNames: true,
      // Its addresses below, the choice in the URL as a failure report's is.
      render: (r) => (
        <button
          type="button"
          class="link-button"
          title={namedByText(r)}
          aria-pressed={params.get("sender") === senderKey(r)}
          onClick={() => setParams({ sender: senderKey(r) })}
        >
          {r.Service}
        </button>
      ),
    },
    // Beside the name: the decision to take shows without scrolling, at 390 pixels too.
    {
      key: "approved",
      label: "Approved",
      value: (r) => (r.Approved === null ? null : r.Approved ? "yes" : "no"),
      render: (r) => (
        <>
          {approvalChoice(r)} {growthBadge(r)}
        </>
      ),
    },
    { key: "type", label: "Type", value: (r) => r.ServiceType || null, wrapNames: true },
    { key: "domain", label: "Domain", value: (r) => r.Domain },
    // The AS and its organisation in one column: as two, the table scrolled sideways at 1280 pixels.
    { key: "network", label: "Network", value: (r) => networkOf(r), wrapNames: true },
    { key: "country", label: "Country", value: (r) => r.Country || null },
    {
      key: "ips",
      label: "Source IPs",
      numeric: true,
      value: (r) => Number(r.SourceIPs),
      render: (r) => formatCount(r.SourceIPs),
    },
    messages<SenderRecord>(),
    passShare<SenderRecord>(),
    spfAligned<SenderRecord>(),
    dkimAligned<SenderRecord>(),
  ];
  const chosen = senderRecords(senders.data).find((r) => senderKey(r) === params.get("sender"));
  const added = grown.get(params.get("added") ?? "");
  return (
    <>
      <Card title="Sending services" id="services-card" wide>
        <ErrorNotice error={problem} />
        {!admin && caller.role === "viewer" ? <Notice>Approving a service needs an admin.</Notice> : null}
        <DataTable
          id="services"
          caption="Sending services by domain, with their network, country and approval"
          columns={columns}
          rows={senders.data?.records ?? []}
          rowKey={senderKey}
          defaultSort="-messages"
          csvName="services.csv"
          empty={<EmptyState title="No senders in this period">Choose a longer period.</EmptyState>}
        />
      </Card>
      {added ? (
        <AddedSinceApproval
          decision={added}
          admin={admin}
          approveAgain={async () => {
            await approve({ Domain: added.Domain, Service: added.Sender }, "true");
            setParams({ added: null });
          }}
        />
      ) : null}
      {chosen ? <SenderIps sender={chosen} /> : null}
    </>
  );
}

/** What named a sender, for the tooltip of its name. */
const namedByText = (r: SenderRecord): string | undefined =>
  r.NamedBy === "rdns"
    ? "Named by its forward-confirmed reverse DNS name"
    : r.NamedBy === "auth_domain"
      ? "Named by the DKIM and SPF domains its messages pass with"
      : r.NamedBy === "asn"
        ? "Named by its network (AS)"
        : undefined;

/** "AS15169 Google LLC"; the organisation alone when the number is unknown; null when neither is. */
const networkOf = (r: SenderRecord): string | null =>
  [r.ASN === "" ? "" : `AS${r.ASN}`, r.ASNOrganization].filter(Boolean).join(" ") || null;

/** What PUT sender_approval takes: approve, refuse, or clear the decision. */
type Decision = "true" | "false" | "clear";
const decisionOf = (approved: boolean | null): Decision =>
  approved === null ? "clear" : approved ? "true" : "false";

const senderRecords = (answer: ListAnswer<SenderRecord> | undefined) => answer?.records ?? [];

/**
 * The addresses an approved service groups now and did not when approved: its approval covers
 * them without anyone having seen them. Approving it again approves them too (the decision then
 * records the service's addresses as they are); else approve or refuse them by range.
 */
function AddedSinceApproval({
  decision,
  admin,
  approveAgain,
}: {
  decision: SenderApprovalRecord;
  admin: boolean;
  approveAgain: () => Promise<void>;
}) {
  const listed = decision.AddedSinceApproval ?? [];
  const count = decision.AddedCount ?? 0;
  return (
    <Card title={`${addedText(count)}: ${decision.Sender} for ${decision.Domain}`} id="added-card" wide>
      <p class="hint">
        <button type="button" class="link-button" onClick={() => setParams({ added: null })}>
          Close
        </button>{" "}
        · {formatCount(decision.AddressesAtApproval ?? 0)} addresses when approved;{" "}
        {formatCount(decision.AddressesNow ?? 0)} with mail in this period, of them these {formatCount(count)}{" "}
        new to it. Its approval covers them: approve it again to approve them too, or decide them by IP range.
      </p>
      <ul id="added-addresses" class="address-list">
        {listed.map((address) => (
          <li key={address}>
            <code>{address}</code>
          </li>
        ))}
      </ul>
      {count > listed.length ? (
        <p class="hint">
          The first {formatCount(listed.length)} of {formatCount(count)}, by address.
        </p>
      ) : null}
      {admin ? (
        <button type="button" class="button" onClick={approveAgain}>
          Approve {decision.Sender} again with these addresses
        </button>
      ) : null}
    </Card>
  );
}
