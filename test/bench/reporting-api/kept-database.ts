import { type TestDatabase, testServerUrl } from "@dmarc-ledger/db/testing";

/**
 * A database an earlier run of a bench kept (BENCH_KEEP_DB), named `<prefix>_<hex>` as
 * createTestDatabase(prefix) names it: measured again, never dropped.
 */
export function keptDatabase(name: string, prefix: string): TestDatabase {
  if (!new RegExp(`^${prefix}_[0-9a-f]+$`).test(name))
    throw new Error(`BENCH_DATABASE: ${name} is not a database this bench kept (${prefix}_…)`);
  const url = new URL(testServerUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: async () => {} };
}
