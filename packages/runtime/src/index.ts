export { openRuntime, type Runtime, type RuntimeOptions } from "./open-runtime.js";
export { runtimeSettings } from "./settings.js";
