import type { Kysely } from "kysely";
import type { AlertsSchema } from "./schema.js";

export interface WebhookEndpointView {
  id: string;
  url: string;
  alert_types: string[];
  description: string;
  enabled: boolean;
  disabled_reason: string | null;
  /** Paused by the service after failing too long, and why: its deliveries wait for its resume. */
  paused_at: string | null;
  paused_reason: string | null;
  created_at: string;
  updated_at: string;
  /**
   * How its deliveries go: the last success and failure (a category), since when it fails (null
   * while it succeeds), and how many deliveries wait for it.
   */
  health: {
    last_success_at: string | null;
    last_failure_at: string | null;
    last_failure: string | null;
    failing_since: string | null;
    pending: number;
  };
}

/** A tenant's webhook endpoints (never their secrets), oldest first: a page of them, or all. */
export async function listEndpoints(
  db: Kysely<AlertsSchema>,
  tenantId: string,
  page?: { limit: number; offset: number },
): Promise<WebhookEndpointView[]> {
  let query = db
    .selectFrom("webhook_endpoint as e")
    .leftJoin("webhook_endpoint_health as h", "h.endpoint_id", "e.endpoint_id")
    .selectAll("e")
    .select([
      "h.last_success_at",
      "h.last_failure_at",
      "h.last_failure",
      "h.failing_since",
      (eb) =>
        eb
          .selectFrom("webhook_delivery as d")
          .select((inner) => inner.fn.countAll<string>().as("n"))
          .whereRef("d.endpoint_id", "=", "e.endpoint_id")
          .where("d.status", "=", "pending")
          .as("pending"),
    ])
    .where("e.tenant_id", "=", tenantId)
    .orderBy("e.created_at")
    .orderBy("e.endpoint_id");
  if (page) query = query.limit(page.limit).offset(page.offset);
  const rows = await query.execute();
  return rows.map((row) => ({
    id: row.endpoint_id,
    url: row.url,
    alert_types: JSON.parse(row.alert_types),
    description: row.description,
    enabled: row.enabled,
    disabled_reason: row.disabled_reason,
    paused_at: iso(row.paused_at ?? null),
    paused_reason: row.paused_reason ?? null,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
    health: {
      last_success_at: iso(row.last_success_at ?? null),
      last_failure_at: iso(row.last_failure_at ?? null),
      last_failure: row.last_failure ?? null,
      failing_since: iso(row.failing_since ?? null),
      pending: Number(row.pending ?? 0),
    },
  }));
}

/** How many webhook endpoints a tenant has. */
export async function countEndpoints(db: Kysely<AlertsSchema>, tenantId: string): Promise<number> {
  const { n } = await db
    .selectFrom("webhook_endpoint")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("tenant_id", "=", tenantId)
    .executeTakeFirstOrThrow();
  return Number(n);
}

export interface DeliveryView {
  id: string;
  alert_id: string;
  endpoint_id: string;
  status: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  delivered_at: string | null;
  created_at: string;
}

const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());

/** An endpoint's delivery log, newest first; null when the endpoint is not the tenant's. */
export async function listDeliveries(
  db: Kysely<AlertsSchema>,
  tenantId: string,
  endpointId: string,
  page: { limit: number; offset: number },
): Promise<{ total: number; records: DeliveryView[] } | null> {
  const endpoint = await db
    .selectFrom("webhook_endpoint")
    .select("endpoint_id")
    .where("endpoint_id", "=", endpointId)
    .where("tenant_id", "=", tenantId)
    .executeTakeFirst();
  if (!endpoint) return null;
  const base = db
    .selectFrom("webhook_delivery")
    .where("endpoint_id", "=", endpointId)
    .where("tenant_id", "=", tenantId);
  const count = await base.select((eb) => eb.fn.countAll<string>().as("n")).executeTakeFirstOrThrow();
  const rows = await base
    .selectAll()
    .orderBy("created_at", "desc")
    .orderBy("delivery_id")
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  return {
    total: Number(count.n),
    records: rows.map((row) => ({
      id: row.delivery_id,
      alert_id: row.alert_id,
      endpoint_id: row.endpoint_id,
      status: row.status,
      attempts: row.attempts,
      last_status: row.last_status,
      last_error: row.last_error,
      next_attempt_at: row.status === "pending" ? iso(row.next_attempt_at) : null,
      last_attempt_at: iso(row.last_attempt_at),
      delivered_at: iso(row.delivered_at),
      created_at: iso(row.created_at)!,
    })),
  };
}

export interface AlertView {
  id: string;
  rule: string;
  domain: string | null;
  period: { start: string; end: string; key: string };
  summary: string;
  figures: Record<string, unknown>;
  /** The finding's members (e.g. each new sender); empty when it has none. */
  items: Record<string, unknown>[];
  /** Its day's reports may still arrive: the figures are so far. */
  so_far: boolean;
  /** The alert this one updates, or null. */
  revises: string | null;
  caused_by: { stream: string; position: string }[];
  raised_at: string;
  /** When it was acknowledged; null while it is open. */
  acknowledged_at: string | null;
  /** Who acknowledged it (`user:<id>`, `key:<id>`); null while it is open. */
  acknowledged_by: string | null;
}

export type AlertState = "open" | "acknowledged";

export interface AlertFilter {
  rule?: string;
  domain?: string;
  state?: AlertState;
  /** Alerts whose period overlaps these instants, both inclusive. */
  period?: { start: Date; end: Date };
  limit: number;
  offset: number;
}

/** A tenant's alerts, newest first, optionally of one rule, domain, state or period. */
export async function listAlerts(
  db: Kysely<AlertsSchema>,
  tenantId: string,
  filter: AlertFilter,
): Promise<{ total: number; records: AlertView[] }> {
  let base = db.selectFrom("alert").where("tenant_id", "=", tenantId);
  if (filter.rule) base = base.where("rule", "=", filter.rule as never);
  if (filter.domain) base = base.where("domain", "=", filter.domain);
  if (filter.state === "open") base = base.where("acknowledged_at", "is", null);
  if (filter.state === "acknowledged") base = base.where("acknowledged_at", "is not", null);
  if (filter.period) {
    base = base.where("period_start", "<=", filter.period.end).where("period_end", ">=", filter.period.start);
  }
  const count = await base.select((eb) => eb.fn.countAll<string>().as("n")).executeTakeFirstOrThrow();
  const rows = await base
    .selectAll()
    .orderBy("raised_at", "desc")
    .orderBy("alert_id")
    .limit(filter.limit)
    .offset(filter.offset)
    .execute();
  return {
    total: Number(count.n),
    records: rows.map((row) => {
      const alert = JSON.parse(row.payload);
      return {
        id: row.alert_id,
        rule: row.rule,
        domain: row.domain,
        period: alert.period,
        summary: row.summary,
        figures: alert.figures,
        // Rows of alerts raised before v2 of AlertRaised hold none of these.
        items: alert.items ?? [],
        so_far: alert.soFar ?? false,
        revises: alert.revises ?? null,
        caused_by: alert.causedBy,
        raised_at: iso(row.raised_at)!,
        acknowledged_at: iso(row.acknowledged_at),
        acknowledged_by: row.acknowledged_by,
      };
    }),
  };
}
