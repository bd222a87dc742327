import type { PolicyImpactAnswer, PolicyImpactRecord } from "../api/types.js";
import { useApi } from "../api/use-api.js";
import { Card } from "../components/card.js";
import { type Column, DataTable } from "../components/data-table.js";
import { EmptyState } from "../components/empty-state.js";
import { ErrorNotice, Loading } from "../components/notice.js";
import { addedText, useGrownApprovals } from "../lib/approval-growth.js";
import { useFilters, viewLink } from "../lib/filters.js";
import { count, formatCount } from "../lib/format.js";
import { setParams, useLocation } from "../lib/router.js";
import { AppLink } from "./app-link.js";

const counted = (key: keyof PolicyImpactRecord, label: string): Column<PolicyImpactRecord> => ({
  key,
  label,
  numeric: true,
  value: (r) => count(r[key] as string),
  render: (r) => formatCount(r[key] as string),
});

/**
 * What moving to p=quarantine or p=reject would stop, per domain and sender, from GET
 * policy_impact: the failing mail not already stopped, split into legitimate at risk (approved
 * senders, forwarding) and abuse stopped. In the navigation once the API links that endpoint.
 */
export function Policy({ features }: { features: ReadonlySet<string> }) {
  const filters = useFilters();
  // In the URL as the other filters: a shared link shows the same policy's impact.
  const policy = useLocation().params.get("policy") === "quarantine" ? "quarantine" : "reject";
  const impact = useApi<PolicyImpactAnswer>("policy_impact", { ...filters.query, policy, per_page: 1000 });
  // An approval that covers addresses nobody saw counts them as legitimate: it says so here too.
  const grown = useGrownApprovals(features.has("sender_approvals"), filters.query);
  if (impact.loading && !impact.data) return <Loading what="the policy impact" />;
  if (impact.error) return <ErrorNotice error={impact.error} />;
  const totals = impact.data?.totals;
  const columns: Column<PolicyImpactRecord>[] = [
    { key: "domain", label: "Domain", value: (r) => r.Domain },
    { key: "service", label: "Sender", value: (r) => r.Service },
    // The numbers first: at 390 pixels they are what shows before the table scrolls.
    counted("Stopped", "Stopped"),
    counted("LegitimateAtRisk", "Legitimate at risk"),
    counted("AbuseStopped", "Abuse stopped"),
    counted("Forwarded", "Of them forwarded"),
    { key: "type", label: "Type", value: (r) => r.ServiceType || null },
    {
      key: "approved",
      label: "Approved",
      value: (r) => (r.Approved === null ? null : r.Approved ? "yes" : "no"),
      render: (r) => {
        const decision = grown.get(`${r.Domain}|${r.Service}`);
        const shown = r.Approved === null ? <span class="muted">–</span> : r.Approved ? "yes" : "no";
        return decision ? (
          <>
            {shown}{" "}
            <span class="badge badge-grown">
              <AppLink href={viewLink("/senders", { tab: "services", added: `${r.Domain}|${r.Service}` })}>
                {addedText(decision.AddedCount!)}
              </AppLink>
            </span>
          </>
        ) : (
          shown
        );
      },
    },
  ];
  return (
    <Card title="Policy impact" id="policy-card" wide>
      <p class="hint">
        Messages that failed DMARC and would have been stopped over the period at a stricter policy:
        legitimate at risk (approved senders and forwarding) are the ones to fix first.
      </p>
      {/* Labelled by id: a select inside its label has the options' text in its name. */}
      <div class="field field-inline">
        <label for="policy-choice">Policy</label>
        <select
          id="policy-choice"
          value={policy}
          onChange={(event) => setParams({ policy: (event.currentTarget as HTMLSelectElement).value })}
        >
          <option value="quarantine">p=quarantine</option>
          <option value="reject">p=reject</option>
        </select>
      </div>
      {totals ? (
        <p id="policy-totals">
          Of {formatCount(totals.Volume)} messages ({formatCount(totals.DMARC)} passing DMARC), p={policy}{" "}
          would stop {formatCount(totals.Stopped)}: {formatCount(totals.LegitimateAtRisk)} legitimate at risk,{" "}
          {formatCount(totals.AbuseStopped)} abuse.
        </p>
      ) : null}
      <DataTable
        id="policy"
        caption="Per domain and sender, the failing messages a stricter DMARC policy would stop"
        columns={columns}
        rows={impact.data?.records ?? []}
        rowKey={(r) => `${r.Domain}|${r.Service}`}
        defaultSort="-Stopped"
        csvName="policy-impact.csv"
        empty={<EmptyState title="Nothing a stricter policy would stop">Choose a longer period.</EmptyState>}
      />
    </Card>
  );
}
