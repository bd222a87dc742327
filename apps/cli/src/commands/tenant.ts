import type { Region, Scope } from "@dmarc-ledger/events";
import { type Command, Option } from "commander";
import { CliError, type CliIO, jsonDocument } from "../io.js";
import { catchUpTenantTables, resolveTenant } from "../tenant-ref.js";
import { withRuntime } from "../with-runtime.js";
import { registerPersonalDataCommands } from "./personal-data.js";

const cli = { causedBy: "process:cli" };

const allScopes: readonly Scope[] = ["read", "write", "ingest"];

/** Loaded when a command runs: `--help` and commands that need neither never pay for them. */
const tenancy = () => import("@dmarc-ledger/tenancy");

function parseScopes(value: string): Scope[] {
  const scopes = value.split(",").map((scope) => scope.trim());
  for (const scope of scopes) {
    if (!allScopes.includes(scope as Scope))
      throw new CliError(`Unknown scope "${scope}"; use ${allScopes.join(", ")}.`);
  }
  return scopes as Scope[];
}

/** The region this deployment serves: a tenant of the other region could only ever get 421 here. */
export function deploymentRegion(env: NodeJS.ProcessEnv): Region {
  const region = env.DMARC_LEDGER_REGION ?? "global";
  if (region !== "global" && region !== "eu") {
    throw new CliError(`DMARC_LEDGER_REGION: "${region}" is not one of global, eu`);
  }
  return region;
}

const isoSeconds = (date: Date) => `${date.toISOString().slice(0, 19)}Z`;

/** Turns the tenancy package's "not found" errors into messages for the terminal. */
async function asCliErrors<T>(work: () => Promise<T>): Promise<T> {
  const { UnknownApiKeyError, UnknownTenantError } = await tenancy();
  try {
    return await work();
  } catch (error) {
    if (error instanceof UnknownTenantError || error instanceof UnknownApiKeyError) {
      throw new CliError(error.message);
    }
    throw error;
  }
}

export function registerTenantCommands(program: Command, io: CliIO, env: NodeJS.ProcessEnv): void {
  const tenant = program
    .command("tenant")
    .description("create and list tenants, manage their API keys and their personal data");
  registerPersonalDataCommands(program, tenant, io, env);

  tenant
    .command("create")
    .description("create a tenant and its first API key (shown once)")
    .argument("<name>", "the tenant's name")
    .addOption(
      new Option("--region <region>", "the tenant's region: the deployment's (DMARC_LEDGER_REGION)").choices([
        "global",
        "eu",
      ]),
    )
    .option("--json", 'print {"tenantId", "apiKey"} as JSON')
    .action(async (name: string, options: { region?: Region; json?: boolean }) => {
      const region = deploymentRegion(env);
      if (options.region && options.region !== region) {
        throw new CliError(
          `This deployment serves the ${region} region (DMARC_LEDGER_REGION); a tenant of ${options.region} belongs in that region's deployment.`,
        );
      }
      const { createTenant } = await tenancy();
      const created = await withRuntime(env, (runtime) => createTenant(runtime.store, { name, region }, cli));
      if (options.json) {
        io.out(JSON.stringify({ tenantId: created.tenantId, apiKey: created.apiKey }));
      } else {
        io.out(`Tenant ${created.tenantId} created in region ${region}.`);
        io.out(`API key (shown once, keep it safe): ${created.apiKey}`);
      }
    });

  tenant
    .command("list")
    .description("list the tenants: id, name, region, created, active keys, domains")
    .option("--json", "print them as one JSON array")
    .action(async (options: { json?: boolean }) => {
      const tenants = await withRuntime(env, async (runtime) => {
        await catchUpTenantTables(runtime);
        return (await tenancy()).listTenants(runtime.db);
      });
      if (options.json) {
        io.out(jsonDocument(tenants.map((t) => ({ ...t, createdAt: t.createdAt.toISOString() }))));
        return;
      }
      for (const t of tenants) {
        io.out(
          `${t.tenantId}  ${t.name}  ${t.region}  created ${isoSeconds(t.createdAt)}  keys ${t.activeKeys}  domains ${t.domains}`,
        );
      }
      if (tenants.length === 0) io.out("No tenants yet: `dmarc-ledger tenant create NAME`.");
    });

  const key = tenant.command("key").description("list, issue and revoke API keys");
  key
    .command("list")
    .description("list a tenant's keys: id, prefix, scopes, created, revoked")
    .argument("<tenant>", "the tenant's id or name")
    .option("--json", "print them as one JSON array")
    .action(async (reference: string, options: { json?: boolean }) => {
      const state = await withRuntime(env, async (runtime) => {
        await catchUpTenantTables(runtime);
        const { tenantId } = await resolveTenant(runtime, reference);
        return (await tenancy()).readTenant(runtime.store, tenantId);
      });
      const keys = [...state.keys];
      if (options.json) {
        io.out(
          jsonDocument(
            keys.map(([keyId, k]) => ({
              keyId,
              keyPrefix: k.keyPrefix,
              scopes: k.scopes,
              createdAt: k.createdAt.toISOString(),
              revokedAt: k.revokedAt?.toISOString() ?? null,
            })),
          ),
        );
        return;
      }
      for (const [keyId, k] of keys) {
        io.out(
          `${keyId}  ${k.keyPrefix}…  ${k.scopes.join(",")}  created ${isoSeconds(k.createdAt)}  ${k.revokedAt ? `revoked ${isoSeconds(k.revokedAt)}` : "active"}`,
        );
      }
    });
  key
    .command("issue")
    .description("issue another key for a tenant (shown once)")
    .argument("<tenant>", "the tenant's id or name")
    .option("--scopes <list>", "comma-separated: read,write,ingest", "read")
    .option("--json", 'print {"keyId", "apiKey"} as JSON')
    .action(async (reference: string, options: { scopes: string; json?: boolean }) => {
      const scopes = parseScopes(options.scopes);
      const issued = await withRuntime(env, async (runtime) => {
        await catchUpTenantTables(runtime);
        const { tenantId } = await resolveTenant(runtime, reference);
        const { issueApiKey } = await tenancy();
        return asCliErrors(() => issueApiKey(runtime.store, { tenantId, scopes }, cli));
      });
      io.out(
        options.json
          ? JSON.stringify({ keyId: issued.keyId, apiKey: issued.apiKey })
          : `API key ${issued.keyId} (shown once): ${issued.apiKey}`,
      );
    });
  key
    .command("revoke")
    .description("revoke a key")
    .argument("<tenant>", "the tenant's id or name")
    .argument("<keyId>")
    .action(async (reference: string, keyId: string) => {
      const outcome = await withRuntime(env, async (runtime) => {
        await catchUpTenantTables(runtime);
        const { tenantId } = await resolveTenant(runtime, reference);
        const { revokeApiKey } = await tenancy();
        return asCliErrors(() => revokeApiKey(runtime.store, { tenantId, keyId }, cli));
      });
      io.out(
        outcome.status === "revoked" ? `API key ${keyId} revoked.` : `API key ${keyId} was already revoked.`,
      );
    });
}
