import type { AnySchema } from "@dmarc-ledger/db";
import type { EventStore } from "@dmarc-ledger/event-store";
import { type EventMetadata, newEvent, streams, type TenantErased } from "@dmarc-ledger/events";
import { purgeOwnerInputs } from "@dmarc-ledger/intake";
import { shredDataKeys } from "@dmarc-ledger/personal-data";
import { countPersonalRows, tenantReportDomainNames } from "@dmarc-ledger/report-read-models";
import type { Kysely } from "kysely";

/**
 * Erasure on request (docs/privacy.md): at once, every data key of the tenant is deleted (its
 * failure reports' personal fields and its rejected uploads' bytes, in the events and the read
 * model, can never be read again), the raw archive drops the bytes of every input of its domains
 * or uploaded by it, and TenantErased says so; its projection drops the tenant's /forensic rows.
 * The aggregate facts stay (counts per sending server, not people; docs/privacy.md).
 */
export async function eraseTenant(
  runtime: { db: Kysely<AnySchema>; store: EventStore },
  tenantId: string,
  metadata: EventMetadata,
): Promise<{ event: TenantErased; position: bigint }> {
  const db = runtime.db;
  const failureReports = await countPersonalRows(db as never, tenantId, null);
  const keys = await shredDataKeys(db, tenantId);
  const domains = await tenantReportDomainNames(db, tenantId);
  const rawInputs = await purgeOwnerInputs(db as never, { tenantId, domains }, null);
  const event: TenantErased = {
    tenantId,
    keysShredded: keys.length,
    removed: { failureReports, rawInputs, users: 0 },
  };
  const { position } = await runtime.store.append(
    streams.personalData(tenantId),
    [newEvent("TenantErased", event, metadata)],
    "any",
  );
  return { event, position };
}
