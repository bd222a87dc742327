import { type BuiltProcess, startBuiltProcess } from "../../../../test/support/start-built-process.js";

export { type LogLine, waitFor } from "../../../../test/support/start-built-process.js";
export type IngestProcess = BuiltProcess;

/** apps/ingest/src/main.ts, built, as its own process as production runs it. */
export function startIngestProcess(env: NodeJS.ProcessEnv): Promise<IngestProcess> {
  return startBuiltProcess("apps/ingest/dist/main.js", env);
}
