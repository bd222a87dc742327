import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pgliteTemplateVariable } from "@dmarc-ledger/db/testing";
import { buildRunVariable, startRunBuild, webBuildRunVariable, webBuildScript } from "./built-processes.js";

/**
 * A directory for this run, where:
 * - the first test that needs a fresh PGlite database runs initdb, and the others copy what it
 *   made (createPgliteDataDir). A directory given in the variable is used as it is, and kept:
 *   running single files one after another, it saves each run its initdb;
 * - the build that tests starting our processes wait for writes its outcome (builtEntry), and
 *   the dashboard's build its own (builtWeb). They start now, beside the first test files.
 * The workers start after this, with this process's environment.
 */
export default function setup(): () => void {
  const run = mkdtempSync(join(tmpdir(), "dl-test-run-"));
  const givenTemplate = Boolean(process.env[pgliteTemplateVariable]);
  if (!givenTemplate) process.env[pgliteTemplateVariable] = join(run, "pglite");
  process.env[buildRunVariable] = join(run, "build");
  process.env[webBuildRunVariable] = join(run, "web");
  const stopBuild = startRunBuild(join(run, "build"));
  // The dashboard apart: a second or two, and only the browser tests (and pnpm start's) wait for it.
  const stopWebBuild = startRunBuild(join(run, "web"), webBuildScript);
  return () => {
    stopBuild();
    stopWebBuild();
    rmSync(run, { recursive: true, force: true });
  };
}
