import type { Reporter, TestModule } from "vitest/node";

/**
 * Prints "vitest: N passed, N failed, N skipped" alone on the last line, the plain closing line
 * that CI reads to tell a run that tested something from one that tested nothing.
 */
export default class ClosingLineReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    for (const module of testModules) {
      let failedTests = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") counts.passed++;
        else if (state === "failed") failedTests++;
        else counts.skipped++;
      }
      counts.failed += failedTests;
      // A file that failed without a failed test (it did not load, or a beforeAll or afterAll
      // threw and its tests were skipped): count the file as a failure.
      if (module.state() === "failed" && failedTests === 0) counts.failed++;
    }
    process.stdout.write(
      `\nvitest: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`,
    );
  }
}
