import type { Runtime } from "@dmarc-ledger/runtime";
import type { TenantSummary } from "@dmarc-ledger/tenancy";
import { CliError } from "./io.js";

/**
 * The tables of tenants, their keys and domains, as of every event stored: what the tenant and
 * domain commands read. The other read models are the projector's (the service catches them up
 * when it starts), so a command does not wait for reports to be counted (in embedded mode
 * nothing else projects meanwhile).
 */
export async function catchUpTenantTables(runtime: Runtime): Promise<void> {
  const [{ catchUp }, { domainsProjection, tenantsProjection }] = await Promise.all([
    import("@dmarc-ledger/projection-engine"),
    import("@dmarc-ledger/tenancy"),
  ]);
  await catchUp({
    store: runtime.store,
    db: runtime.db,
    projections: [tenantsProjection, domainsProjection],
  });
}

/**
 * The tenant a command names, by id or by name (names need not be unique: a name held by several
 * tenants must be given as an id). Reads the read models, caught up by the caller.
 */
export async function resolveTenant(runtime: Runtime, reference: string): Promise<TenantSummary> {
  const { listTenants } = await import("@dmarc-ledger/tenancy");
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
