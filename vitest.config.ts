import { defineConfig } from "vitest/config";
import SlowestFirstSequencer from "./test/support/slowest-first-sequencer.js";

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts", "apps/*/test/**/*.test.ts", "test/**/*.test.ts"],
    // Real PostgreSQL, DNS and SMTP servers make some tests slow on a 2-core machine.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // expect.poll waits for a state that comes (a projection caught up, a page re-rendered); its
    // default of 1 s failed the browser tests at load 21 on 2 cores. A wrong state still fails.
    expect: { poll: { timeout: 15_000 } },
    pool: "forks",
    // PGlite's initdb once for the run, when a test first needs it (@dmarc-ledger/db/testing), and
    // the build that tests starting our processes run (test/support/built-processes.ts).
    globalSetup: ["./test/support/global-setup.ts"],
    // Vitest's default is one worker fewer than the cores: one worker here, so the files ran one
    // after another. They mostly wait (PostgreSQL, DNS and mail servers on loopback, timers),
    // so three share the two cores well.
    maxWorkers: 3,
    // Each worker runs its files one after another in one process, importing the packages once
    // (and compiling PGlite's WebAssembly once) instead of once a file: 0.5 to 1.5 s of CPU a file.
    // Nothing in the sources keeps state in a module, and no test mocks or stubs globals.
    isolate: false,
    sequence: { sequencer: SlowestFirstSequencer },
    reporters: ["default", "./test/support/closing-line-reporter.ts"],
  },
});
