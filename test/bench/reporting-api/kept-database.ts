import { type TestDatabase, testServerUrl } from "@dmarc-ledger/db/testing";
import { catchUp } from "@dmarc-ledger/projection-engine";
import type { Runtime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { allScopes, issueApiKey } from "@dmarc-ledger/tenancy";
import type pg from "pg";

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

/**
 * The one tenant of a kept database, with a key of its own for this run (keys are stored hashed:
 * the load's is not to be had again); read models added since the load are projected first.
 */
export async function keptTenant(
  runtime: Runtime,
  client: pg.Client,
): Promise<{ tenantId: string; apiKey: string }> {
  await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
  const { rows: found } = await client.query<{ tenant_id: string }>("select tenant_id from domain limit 1");
  const tenantId = found[0]!.tenant_id;
  const { apiKey } = await issueApiKey(
    runtime.store,
    { tenantId, scopes: [...allScopes] },
    { causedBy: "bench" },
  );
  await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
  return { tenantId, apiKey };
}
