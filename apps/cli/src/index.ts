export { CliError, type CliIO } from "./io.js";
export { createProgram, runCli } from "./program.js";
export { type RunningService, type ServiceOptions, startService } from "./service.js";
