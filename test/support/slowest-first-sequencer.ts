import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The files that take longest, longest first (measured on the 2-core machine). Vitest orders files
 * by their last durations, which a fresh clone has none of: it then starts the larger files first,
 * and the rankings test, 8 lines that import their cases, came last and ran alone at the end.
 */
const slowest = [
  "test/integration/source-rankings/pglite.test.ts",
  "test/integration/source-rankings/postgres.test.ts",
  "apps/intake/test/imap-intake.test.ts",
  "packages/event-store/test/event-store.contract.test.ts",
  "packages/safe-spf-service/test/refresh-sharing-and-restart.test.ts",
  "packages/db/test/open-database.test.ts",
  // These start our built processes and wait for the run's build (built-processes.ts), which
  // runs beside the first files: started first, they held a worker while it ran.
  "test/e2e/process-signals.test.ts",
  "test/e2e/projector-crash.test.ts",
];

/** Vitest's order, with the slowest files put first. */
export default class SlowestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const at = slowest.findIndex((path) => file.moduleId.endsWith(`/${path}`));
      return at === -1 ? slowest.length : at;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}
