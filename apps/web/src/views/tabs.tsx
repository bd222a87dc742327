import { withParams } from "../lib/router.js";
import { AppLink } from "./app-link.js";

/** Tabs within a view, as links: the chosen one is in the URL (`tab`). */
export function Tabs({
  tabs,
  current,
  label,
}: {
  tabs: { id: string; label: string }[];
  current: string;
  label: string;
}) {
  return (
    <nav class="subtabs" aria-label={label}>
      {tabs.map((tab) => (
        <AppLink key={tab.id} href={withParams({ tab: tab.id })} current={tab.id === current}>
          {tab.label}
        </AppLink>
      ))}
    </nav>
  );
}
