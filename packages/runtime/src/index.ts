// The projections are "@dmarc-ledger/runtime/projections": they load the report parser, which
// opening the database does not need.

export { runtimeDataKeys } from "./data-keys.js";
export { tableMigrations } from "./migration-sets.js";
export { openRuntime, type Runtime, type RuntimeOptions } from "./open-runtime.js";
export { runtimeSettings } from "./settings.js";
