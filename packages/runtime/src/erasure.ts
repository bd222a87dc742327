import type { AnySchema } from "@dmarc-ledger/db";
import type { EventStore } from "@dmarc-ledger/event-store";
import { type EventMetadata, newEvent, streams, type TenantErased } from "@dmarc-ledger/events";
import { purgeOwnerInputs } from "@dmarc-ledger/intake";
import { domainScope, shredDataKeys } from "@dmarc-ledger/personal-data";
import { catchUp } from "@dmarc-ledger/projection-engine";
import { countPersonalRows, tenantReportDomainNames } from "@dmarc-ledger/report-read-models";
import { removeTenantPeople, usersProjections } from "@dmarc-ledger/users";
import type { Kysely } from "kysely";

/**
 * Erasure on request (docs/privacy.md): at once, every data key of the tenant and of its report
 * domains' own scopes (reports about them from before the tenant added them) is deleted: their
 * failure reports' personal fields and its rejected uploads' bytes, in the events and the read
 * model, can never be read again. The raw archive drops the bytes of every input of its domains
 * or uploaded by it, and TenantErased says so; its projection drops those /forensic rows. Every
 * person of the tenant is taken out of it, and erased (their key shredded) unless another tenant
 * has them: the tenant is left without people, and its caller gives it a fresh admin. The
 * aggregate facts stay (counts per sending server, not people; docs/privacy.md).
 */
export async function eraseTenant(
  runtime: { db: Kysely<AnySchema>; store: EventStore },
  tenantId: string,
  metadata: EventMetadata,
): Promise<{ event: TenantErased; position: bigint }> {
  const db = runtime.db;
  const domains = await tenantReportDomainNames(db, tenantId);
  const scopes = domains.map(domainScope);
  let failureReports = 0;
  let keysShredded = 0;
  for (const scope of [tenantId, ...scopes]) {
    failureReports += await countPersonalRows(db as never, scope, null);
    keysShredded += (await shredDataKeys(db, scope)).length;
  }
  const rawInputs = await purgeOwnerInputs(db as never, { tenantId, domains }, null);
  // Its people as every stored event says (the projector may lag, or not run: the CLI).
  await catchUp({ store: runtime.store, db, projections: usersProjections });
  const people = await removeTenantPeople(runtime.store, db as never, tenantId, metadata);
  const event: TenantErased = {
    tenantId,
    scopes,
    keysShredded,
    removed: { failureReports, rawInputs, users: people.removed },
  };
  const { position } = await runtime.store.append(
    streams.personalData(tenantId),
    [newEvent("TenantErased", event, metadata)],
    "any",
  );
  return { event, position };
}
