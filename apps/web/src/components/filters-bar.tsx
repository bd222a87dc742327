import { useState } from "preact/hooks";
import type { ListAnswer, TenantDomainRecord } from "../api/types.js";
import { useApi } from "../api/use-api.js";
import { useFilters } from "../lib/filters.js";
import { describePeriod, presets } from "../lib/period.js";
import { setParams } from "../lib/router.js";

const presetLabels: Record<(typeof presets)[number], string> = {
  "7d": "Last 7 days",
  "30d": "Last 30 days",
  "90d": "Last 90 days",
  "365d": "Last 365 days",
  all: "All time",
};

/** The tenant's domains, for the domain filter and the views that name them. */
export function useTenantDomains() {
  return useApi<ListAnswer<TenantDomainRecord>>("domains", { per_page: 1000 });
}

export function DomainFilter() {
  const { domain } = useFilters();
  const domains = useTenantDomains().data?.records ?? [];
  return (
    <label class="field field-inline">
      <span>Domain</span>
      <select
        value={domain ?? ""}
        onChange={(event) => setParams({ domain: (event.currentTarget as HTMLSelectElement).value || null })}
      >
        <option value="">All domains</option>
        {domains.map((d) => (
          <option key={d.Domain} value={d.Domain}>
            {d.Domain}
          </option>
        ))}
        {domain && !domains.some((d) => d.Domain === domain) ? (
          <option value={domain}>{domain}</option>
        ) : null}
      </select>
    </label>
  );
}

export function PeriodPicker() {
  const { choice, period } = useFilters();
  const [from, setFrom] = useState(choice.from ?? period.from);
  const [to, setTo] = useState(choice.to ?? period.to);
  return (
    <div class="period">
      <label class="field field-inline">
        <span>Period</span>
        <select
          value={choice.period}
          onChange={(event) => {
            const value = (event.currentTarget as HTMLSelectElement).value;
            if (value === "custom") setParams({ period: "custom", from: period.from, to: period.to });
            else setParams({ period: value, from: null, to: null });
          }}
        >
          {presets.map((preset) => (
            <option key={preset} value={preset}>
              {presetLabels[preset]}
            </option>
          ))}
          <option value="custom">Custom…</option>
        </select>
      </label>
      {choice.period === "custom" ? (
        <form
          class="custom-period"
          onSubmit={(event) => {
            event.preventDefault();
            setParams({ period: "custom", from, to });
          }}
        >
          <label class="field field-inline">
            <span>From</span>
            <input
              type="date"
              value={from}
              required
              onInput={(e) => setFrom((e.currentTarget as HTMLInputElement).value)}
            />
          </label>
          <label class="field field-inline">
            <span>To</span>
            <input
              type="date"
              value={to}
              required
              onInput={(e) => setTo((e.currentTarget as HTMLInputElement).value)}
            />
          </label>
          <button type="submit" class="button">
            Apply
          </button>
        </form>
      ) : null}
      <span class="period-days" aria-live="polite">
        {describePeriod(period)}
      </span>
    </div>
  );
}

export function FiltersBar({ period = true }: { period?: boolean }) {
  return (
    <section class="filters" aria-label="Filters">
      <DomainFilter />
      {period ? <PeriodPicker /> : null}
    </section>
  );
}
