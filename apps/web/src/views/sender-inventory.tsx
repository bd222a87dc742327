import { useState } from "preact/hooks";
import { type ApiError, apiWrite, asApiError } from "../api/client.js";
import type { Caller, ListAnswer, SenderRecord } from "../api/types.js";
import { forgetAnswers, useApi } from "../api/use-api.js";
import { Card } from "../components/card.js";
import { type Column, DataTable } from "../components/data-table.js";
import { EmptyState } from "../components/empty-state.js";
import { ErrorNotice, Loading, Notice } from "../components/notice.js";
import { useFilters } from "../lib/filters.js";
import { dkimAligned, messages, passShare, spfAligned } from "./columns.js";

/**
 * The senders by service (issue 23's GET aggregate_by_sender): what each is, its network and
 * country, and whether the domain's owner approved it (PUT sender_approval, for admins). Shown
 * only once the API links aggregate_by_sender.
 */
export function SenderInventory({ caller, canApprove }: { caller: Caller; canApprove: boolean }) {
  const filters = useFilters();
  const senders = useApi<ListAnswer<SenderRecord>>("aggregate_by_sender", {
    ...filters.query,
    per_page: 1000,
  });
  const [problem, setProblem] = useState<ApiError | undefined>();
  const admin = caller.capabilities.includes("write") && canApprove;
  if (senders.loading && !senders.data) return <Loading what="the senders" />;
  if (senders.error) return <ErrorNotice error={senders.error} />;
  const approve = async (row: SenderRecord, approved: boolean) => {
    try {
      await apiWrite("PUT", "sender_approval", {
        domain: row.Domain,
        service: row.Service,
        approved: String(approved),
      });
      setProblem(undefined);
      forgetAnswers();
    } catch (error) {
      setProblem(asApiError(error));
    }
  };
  const columns: Column<SenderRecord>[] = [
    { key: "service", label: "Service", value: (r) => r.Service },
    { key: "type", label: "Type", value: (r) => r.ServiceType || null },
    { key: "domain", label: "Domain", value: (r) => r.Domain },
    { key: "asn", label: "ASN", value: (r) => (r.ASN === "" ? null : `AS${r.ASN}`) },
    { key: "network", label: "Network", value: (r) => r.ASNOrganization || null },
    { key: "country", label: "Country", value: (r) => r.Country || null },
    { key: "ips", label: "Source IPs", numeric: true, value: (r) => Number(r.SourceIPs) },
    messages<SenderRecord>(),
    passShare<SenderRecord>(),
    spfAligned<SenderRecord>(),
    dkimAligned<SenderRecord>(),
    {
      key: "approved",
      label: "Approved",
      value: (r) => (r.Approved === null ? null : r.Approved ? "yes" : "no"),
      render: (r) =>
        admin ? (
          <label class="check">
            <input
              type="checkbox"
              checked={r.Approved === true}
              onChange={(event) => approve(r, (event.currentTarget as HTMLInputElement).checked)}
            />
            <span class="visually-hidden">
              Approve {r.Service} for {r.Domain}
            </span>
          </label>
        ) : r.Approved ? (
          "yes"
        ) : (
          "no"
        ),
    },
  ];
  return (
    <Card title="Sending services" id="services-card" wide>
      <ErrorNotice error={problem} />
      {!admin && caller.role === "viewer" ? <Notice>Approving a service needs an admin.</Notice> : null}
      <DataTable
        id="services"
        caption="Sending services by domain, with their network, country and approval"
        columns={columns}
        rows={senders.data?.records ?? []}
        rowKey={(r) => `${r.Domain}|${r.Service}`}
        defaultSort="-messages"
        csvName="services.csv"
        empty={<EmptyState title="No senders in this period">Choose a longer period.</EmptyState>}
      />
    </Card>
  );
}
