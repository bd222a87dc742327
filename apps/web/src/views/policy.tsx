import type { ListAnswer, PolicyImpactRecord } from "../api/types.js";
import { useApi } from "../api/use-api.js";
import { Card } from "../components/card.js";
import { type Column, DataTable } from "../components/data-table.js";
import { EmptyState } from "../components/empty-state.js";
import { ErrorNotice, Loading } from "../components/notice.js";
import { useFilters } from "../lib/filters.js";
import { count, formatCount, formatShare, share } from "../lib/format.js";

/**
 * What moving each domain to p=quarantine or p=reject would do to its mail, from issue 23's GET
 * policy_impact. In the navigation only once the API links that endpoint.
 */
export function Policy() {
  const filters = useFilters();
  const impact = useApi<ListAnswer<PolicyImpactRecord>>("policy_impact", {
    ...filters.query,
    per_page: 1000,
  });
  if (impact.loading && !impact.data) return <Loading what="the policy impact" />;
  if (impact.error) return <ErrorNotice error={impact.error} />;
  const columns: Column<PolicyImpactRecord>[] = [
    { key: "domain", label: "Domain", value: (r) => r.Domain },
    { key: "policy", label: "Policy now", value: (r) => r.Policy },
    {
      key: "messages",
      label: "Messages",
      numeric: true,
      value: (r) => count(r.Volume),
      render: (r) => formatCount(r.Volume),
    },
    {
      key: "pass",
      label: "DMARC pass",
      numeric: true,
      value: (r) => share(r.DMARC, r.Volume),
      render: (r) => formatShare(share(r.DMARC, r.Volume)),
    },
    {
      key: "quarantine",
      label: "Quarantined at p=quarantine",
      numeric: true,
      value: (r) => count(r.WouldQuarantine),
      render: (r) => formatCount(r.WouldQuarantine),
    },
    {
      key: "reject",
      label: "Rejected at p=reject",
      numeric: true,
      value: (r) => count(r.WouldReject),
      render: (r) => formatCount(r.WouldReject),
    },
    {
      key: "approved",
      label: "Of them from approved senders",
      numeric: true,
      value: (r) => count(r.ApprovedFailing),
      render: (r) => formatCount(r.ApprovedFailing),
    },
  ];
  return (
    <Card title="Policy impact" id="policy-card" wide>
      <p class="hint">
        Messages that would have been quarantined or rejected over the period, had the domain published a
        stricter policy; those from approved senders are the ones to fix first.
      </p>
      <DataTable
        id="policy"
        caption="Per domain, the messages a stricter DMARC policy would have quarantined or rejected"
        columns={columns}
        rows={impact.data?.records ?? []}
        rowKey={(r) => r.Domain}
        defaultSort="-messages"
        csvName="policy-impact.csv"
        empty={<EmptyState title="No reports in this period">Choose a longer period.</EmptyState>}
      />
    </Card>
  );
}
