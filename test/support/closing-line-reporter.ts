import type { Reporter, TestModule } from "vitest/node";

/**
 * Prints "vitest: N passed, N failed, N skipped" alone on the last line, the plain closing line
 * that CI reads to tell a run that tested something from one that tested nothing.
 */
export default class ClosingLineReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") counts.passed++;
        else if (state === "failed") counts.failed++;
        else counts.skipped++;
      }
      // A file that failed to load has no tests to count: count it as a failure.
      if (module.state() === "failed" && [...module.children.allTests()].length === 0) counts.failed++;
    }
    process.stdout.write(
      `\nvitest: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`,
    );
  }
}
