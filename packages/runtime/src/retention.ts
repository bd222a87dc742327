import type { AnySchema } from "@dmarc-ledger/db";
import type { EventStore } from "@dmarc-ledger/event-store";
import { type EventMetadata, newEvent, type RetentionApplied, streams } from "@dmarc-ledger/events";
import { purgeOwnerInputs, purgeUnclaimedInputs } from "@dmarc-ledger/intake";
import {
  defaultPolicy,
  monthOf,
  noTenant,
  personalDataPolicies,
  shredDataKeys,
} from "@dmarc-ledger/personal-data";
import { countPersonalRows, tenantReportDomainNames } from "@dmarc-ledger/report-read-models";
import type { TenancySchema } from "@dmarc-ledger/tenancy";
import type { Kysely } from "kysely";

const DAY_MS = 86_400_000;

/** What one run removed for one tenant: the payload of its RetentionApplied, with its position. */
export interface TenantRetention {
  event: RetentionApplied;
  position: bigint;
}

/**
 * One run of retention (docs/privacy.md), for every tenant and for the data no tenant owns (the
 * defaults): data keys of the months wholly before the failure-report cutoff shredded, the raw
 * archive's bytes of inputs last received before the raw-input cutoff purged, and a
 * RetentionApplied event for each tenant something was removed of, saying what and how much; its
 * projection drops the /forensic rows stored before the cutoff (and a replay drops them again).
 * Keys first, then the event: a crash in between leaves rows whose fields read as removed, and the
 * next run writes the event.
 */
export async function applyRetention(
  runtime: { db: Kysely<AnySchema>; store: EventStore },
  now: Date,
  metadata: EventMetadata = { causedBy: "process:retention" },
): Promise<TenantRetention[]> {
  const db = runtime.db;
  const policies = await personalDataPolicies(db);
  const tenants = await (db as Kysely<TenancySchema>).selectFrom("tenant").select("tenant_id").execute();
  const claimed: string[] = [];
  const done: TenantRetention[] = [];
  for (const tenantId of [...tenants.map((t) => t.tenant_id), noTenant]) {
    const policy = policies.get(tenantId) ?? defaultPolicy;
    const failureReportsBefore = new Date(now.getTime() - policy.failureReportDays * DAY_MS);
    const rawInputsBefore = new Date(now.getTime() - policy.rawInputDays * DAY_MS);
    const failureReports = await countPersonalRows(db as never, tenantId, failureReportsBefore);
    const keysShredded = await shredDataKeys(db, tenantId, monthOf(failureReportsBefore));
    let rawInputs: number;
    if (tenantId === noTenant) {
      rawInputs = await purgeUnclaimedInputs(db as never, claimed, rawInputsBefore);
    } else {
      const domains = await tenantReportDomainNames(db, tenantId);
      claimed.push(...domains);
      rawInputs = await purgeOwnerInputs(db as never, { tenantId, domains }, rawInputsBefore);
    }
    if (failureReports === 0 && keysShredded.length === 0 && rawInputs === 0) continue;
    const event: RetentionApplied = {
      tenantId,
      failureReportsBefore: failureReportsBefore.toISOString(),
      rawInputsBefore: rawInputsBefore.toISOString(),
      aggregatesBefore: null,
      keysShredded,
      removed: { failureReports, rawInputs, aggregateRows: null },
    };
    const { position } = await runtime.store.append(
      streams.personalData(tenantId),
      [newEvent("RetentionApplied", event, metadata)],
      "any",
    );
    done.push({ event, position });
  }
  return done;
}
