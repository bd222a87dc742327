import type { AnySchema } from "@dmarc-ledger/db";
import type { EventStore } from "@dmarc-ledger/event-store";
import { type EventMetadata, newEvent, type RetentionApplied, streams } from "@dmarc-ledger/events";
import { purgeOwnerInputs, purgeUnclaimedInputs } from "@dmarc-ledger/intake";
import {
  defaultPolicy,
  domainOfScope,
  keyScopes,
  monthOf,
  noTenant,
  personalDataPolicies,
  shredDataKeys,
} from "@dmarc-ledger/personal-data";
import {
  countPersonalRows,
  personalRowScopes,
  tenantReportDomainNames,
} from "@dmarc-ledger/report-read-models";
import type { TenancySchema } from "@dmarc-ledger/tenancy";
import type { Kysely } from "kysely";
import { type AggregateExpiry, aggregateRowsOf, expireAggregateFacts } from "./aggregate-retention.js";

const DAY_MS = 86_400_000;

/** What one run removed for one key scope: the payload of its RetentionApplied, with its position. */
export interface TenantRetention {
  event: RetentionApplied;
  position: bigint;
}

/** What one run removed: per key scope (personal data), and per tenant (aggregate facts). */
export interface RetentionDone {
  scopes: TenantRetention[];
  aggregates: AggregateExpiry[];
}

/**
 * One run of retention (docs/privacy.md), for every key scope: each tenant, each domain's own
 * scope (reports about a domain nobody had when they arrived: the policy of the tenant it counts
 * for now, else the defaults) and `-` (the defaults). Data keys of the months wholly before the
 * failure-report cutoff shredded, the raw archive's bytes of inputs last received before the
 * raw-input cutoff purged, and a RetentionApplied for each scope something was removed of,
 * saying what and how much; its projection drops the /forensic rows stored before the cutoff
 * (and a replay drops them again). Keys first, then the event: a crash in between leaves rows
 * whose fields read as removed, and the next run writes the event. Then each tenant's aggregate
 * facts past its `aggregateDays` (aggregate-retention.ts: AggregateFactsExpired). Last,
 * RetentionRun: every run is recorded, with its totals, whether it removed anything or not.
 */
export async function applyRetention(
  runtime: { db: Kysely<AnySchema>; store: EventStore },
  now: Date,
  metadata: EventMetadata = { causedBy: "process:retention" },
): Promise<RetentionDone> {
  const db = runtime.db;
  const policies = await personalDataPolicies(db);
  const tenants = (
    await (db as Kysely<TenancySchema>).selectFrom("tenant").select("tenant_id").execute()
  ).map((row) => row.tenant_id);
  const domainsOf = new Map<string, string[]>();
  const tenantOfDomain = new Map<string, string>();
  for (const tenantId of tenants) {
    const domains = await tenantReportDomainNames(db, tenantId);
    domainsOf.set(tenantId, domains);
    for (const domain of domains) tenantOfDomain.set(domain, tenantId);
  }
  const scopes = new Set([
    ...tenants,
    ...(await keyScopes(db)),
    ...(await personalRowScopes(db as never)),
    noTenant,
  ]);
  const done: TenantRetention[] = [];
  for (const scope of scopes) {
    const domain = domainOfScope(scope);
    const policy =
      policies.get(domain === null ? scope : (tenantOfDomain.get(domain) ?? "")) ?? defaultPolicy;
    const failureReportsBefore = new Date(now.getTime() - policy.failureReportDays * DAY_MS);
    const rawInputsBefore = new Date(now.getTime() - policy.rawInputDays * DAY_MS);
    const failureReports = await countPersonalRows(db as never, scope, failureReportsBefore);
    const keysShredded = await shredDataKeys(db, scope, monthOf(failureReportsBefore));
    let rawInputs = 0;
    if (scope === noTenant) {
      rawInputs = await purgeUnclaimedInputs(db as never, [...tenantOfDomain.keys()], rawInputsBefore);
    } else if (domainsOf.has(scope)) {
      rawInputs = await purgeOwnerInputs(
        db as never,
        { tenantId: scope, domains: domainsOf.get(scope)! },
        rawInputsBefore,
      );
    }
    if (failureReports === 0 && keysShredded.length === 0 && rawInputs === 0) continue;
    const event: RetentionApplied = {
      tenantId: scope,
      failureReportsBefore: failureReportsBefore.toISOString(),
      rawInputsBefore: rawInputsBefore.toISOString(),
      aggregatesBefore: null,
      keysShredded,
      removed: { failureReports, rawInputs, aggregateRows: null },
    };
    const { position } = await runtime.store.append(
      streams.personalData(scope),
      [newEvent("RetentionApplied", event, metadata)],
      "any",
    );
    done.push({ event, position });
  }
  const aggregates = await expireAggregateFacts(
    runtime,
    tenants.map((tenantId) => ({
      tenantId,
      policy: policies.get(tenantId) ?? defaultPolicy,
      domains: domainsOf.get(tenantId) ?? [],
    })),
    now,
    metadata,
  );
  await runtime.store.append(
    streams.retentionRuns(),
    [
      newEvent(
        "RetentionRun",
        {
          ranAt: now.toISOString(),
          scopes: scopes.size,
          removed: {
            keys: done.reduce((sum, run) => sum + run.event.keysShredded.length, 0),
            failureReports: done.reduce((sum, run) => sum + run.event.removed.failureReports, 0),
            rawInputs: done.reduce((sum, run) => sum + run.event.removed.rawInputs, 0),
            aggregateRows: aggregates.reduce((sum, run) => sum + aggregateRowsOf(run.event), 0),
          },
        },
        metadata,
      ),
    ],
    "any",
  );
  return { scopes: done, aggregates };
}
