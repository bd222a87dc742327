import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts", "apps/*/test/**/*.test.ts", "test/**/*.test.ts"],
    // Real PostgreSQL, DNS and SMTP servers make some tests slow on a 2-core machine.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
    // PGlite's initdb once for the run, when a test first needs it (@dmarc-ledger/db/testing).
    globalSetup: ["./test/support/global-setup.ts"],
    // Vitest's default is one worker fewer than the cores: one worker here, so the files ran one
    // after another. They mostly wait (PostgreSQL, DNS and mail servers on loopback, timers),
    // so three share the two cores well.
    maxWorkers: 3,
    reporters: ["default", "./test/support/closing-line-reporter.ts"],
  },
});
