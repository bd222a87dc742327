export { CliError, type CliIO } from "./io.js";
export { createProgram, runCli, runCliHere } from "./program.js";
export { type RunningService, type ServiceOptions, startService } from "./service.js";
