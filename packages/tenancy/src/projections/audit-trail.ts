import type { Projection } from "@dmarc-ledger/projection-engine";
import type { TenancySchema } from "../schema.js";

/** Every event of every domain stream, in order, with who caused it: GET history reads it. */
export const auditTrailProjection: Projection<TenancySchema> = {
  name: "audit_trail",
  tables: ["audit_event"],
  handles: new Set([
    "DomainAdded",
    "DomainRemoved",
    "DomainGroupSet",
    "SenderApprovalSet",
    "SpfOriginalUpdated",
    "SafeSpfRecordComputed",
    "SafeSpfComputationFailed",
  ]),
  async apply(trx, events) {
    const rows = events.map((event) => ({
      domain: (event.data as { domain: string }).domain,
      revision: event.revision.toString(),
      event_type: event.type,
      recorded_at: event.recordedAt,
      caused_by: typeof event.metadata.causedBy === "string" ? event.metadata.causedBy : "unknown",
      correlation_id: typeof event.metadata.correlationId === "string" ? event.metadata.correlationId : null,
      data: JSON.stringify(event.data),
    }));
    if (rows.length > 0) await trx.insertInto("audit_event").values(rows).execute();
  },
};
