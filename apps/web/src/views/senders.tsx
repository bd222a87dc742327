import type { Caller } from "../api/types.js";
import { useLocation } from "../lib/router.js";
import { SenderInventory } from "./sender-inventory.js";
import { SourcesTable } from "./sources-table.js";
import { Tabs } from "./tabs.js";

/**
 * Who sends mail as the tenant's domains: every source with its reverse DNS, and those that fail
 * DMARC; first, when the API links GET aggregate_by_sender, the senders by service with their
 * approval per domain.
 */
export function Senders({ caller, features }: { caller: Caller; features: ReadonlySet<string> }) {
  const { params } = useLocation();
  const inventory = features.has("aggregate_by_sender");
  const tabs = [
    ...(inventory ? [{ id: "services", label: "Services" }] : []),
    { id: "sources", label: "Sources" },
    { id: "unaligned", label: "Unaligned sources" },
  ];
  const requested = params.get("tab");
  const tab = tabs.some((t) => t.id === requested) ? requested! : tabs[0]!.id;
  return (
    <div class="view">
      <Tabs tabs={tabs} current={tab} label="Senders" />
      {tab === "services" ? (
        <SenderInventory
          caller={caller}
          canApprove={features.has("sender_approval")}
          showsGrowth={features.has("sender_approvals")}
        />
      ) : (
        <SourcesTable
          endpoint={tab === "unaligned" ? "aggregate_by_unaligned_source" : "aggregate_by_source"}
        />
      )}
    </div>
  );
}
