import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts", "apps/*/test/**/*.test.ts", "test/**/*.test.ts"],
    // Real PostgreSQL, DNS and SMTP servers make some tests slow on a 2-core machine.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
    reporters: ["default", "./test/support/closing-line-reporter.ts"],
  },
});
