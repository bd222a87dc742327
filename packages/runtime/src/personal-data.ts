// A subpath of its own ("@dmarc-ledger/runtime/personal-data"): it loads the intake, which the
// runtime's index must not (short commands would pay for the report parser).

export { type AggregateExpiry, aggregateCutoffDay } from "./aggregate-retention.js";
export { eraseTenant } from "./erasure.js";
export { applyRetention, type RetentionDone, type TenantRetention } from "./retention.js";
export {
  type ExportedEvent,
  type ExportHeader,
  exportTenant,
  importTenant,
  TenantImportError,
} from "./tenant-export.js";
