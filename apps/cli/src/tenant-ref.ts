import type { TenantSummary } from "@dmarc-ledger/read-models";
import type { Runtime } from "@dmarc-ledger/runtime";
import { CliError } from "./io.js";

/**
 * The tenant a command names, by id or by name (names need not be unique: a name held by several
 * tenants must be given as an id). Reads the read models, caught up by the caller.
 */
export async function resolveTenant(runtime: Runtime, reference: string): Promise<TenantSummary> {
  const { listTenants } = await import("@dmarc-ledger/read-models");
  const tenants = await listTenants(runtime.db);
  const byId = tenants.find((tenant) => tenant.tenantId === reference);
  if (byId) return byId;
  const byName = tenants.filter((tenant) => tenant.name === reference);
  if (byName.length === 1) return byName[0]!;
  if (byName.length > 1) {
    throw new CliError(
      `${byName.length} tenants are named "${reference}" (${byName.map((t) => t.tenantId).join(", ")}); give the id.`,
    );
  }
  throw new CliError(
    `There is no tenant "${reference}" (by id or name); \`dmarc-ledger tenant list\` lists them.`,
  );
}
