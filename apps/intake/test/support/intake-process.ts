import { type BuiltProcess, startBuiltProcess } from "../../../../test/support/start-built-process.js";

export { type LogLine, waitFor } from "../../../../test/support/start-built-process.js";
export type IntakeProcess = BuiltProcess;

/** apps/intake/src/main.ts, built, as its own process as production runs it. */
export function startIntakeProcess(env: NodeJS.ProcessEnv): Promise<IntakeProcess> {
  return startBuiltProcess("apps/intake/dist/main.js", env);
}
