import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pgliteTemplateVariable } from "@dmarc-ledger/db/testing";

/**
 * A directory for this run where the first test that needs a fresh PGlite database runs initdb,
 * and the others copy what it made (createPgliteDataDir). The workers start after this, with this
 * process's environment. A directory given in the variable is used as it is, and kept: running
 * single files one after another, it saves each run its initdb.
 */
export default function setup(): (() => void) | undefined {
  if (process.env[pgliteTemplateVariable]) return undefined;
  const run = mkdtempSync(join(tmpdir(), "dl-pglite-run-"));
  process.env[pgliteTemplateVariable] = run;
  return () => rmSync(run, { recursive: true, force: true });
}
