import type { Region, Scope } from "@dmarc-ledger/events";
import { allScopes, createTenant, issueApiKey, revokeApiKey } from "@dmarc-ledger/tenancy";
import { type Command, Option } from "commander";
import { CliError, type CliIO } from "../io.js";
import { withRuntime } from "../with-runtime.js";

const cli = { causedBy: "process:cli" };

function parseScopes(value: string): Scope[] {
  const scopes = value.split(",").map((scope) => scope.trim());
  for (const scope of scopes) {
    if (!allScopes.includes(scope as Scope))
      throw new CliError(`Unknown scope "${scope}"; use ${allScopes.join(", ")}.`);
  }
  return scopes as Scope[];
}

export function registerTenantCommands(program: Command, io: CliIO, env: NodeJS.ProcessEnv): void {
  const tenant = program.command("tenant").description("create tenants and manage their API keys");

  tenant
    .command("create")
    .description("create a tenant and its first API key (shown once)")
    .argument("<name>", "the tenant's name")
    .addOption(
      new Option("--region <region>", "the region the tenant lives in")
        .choices(["global", "eu"])
        .default("global"),
    )
    .option("--json", 'print {"tenantId", "apiKey"} as JSON')
    .action(async (name: string, options: { region: Region; json?: boolean }) => {
      const created = await withRuntime(env, (runtime) =>
        createTenant(runtime.store, { name, region: options.region }, cli),
      );
      if (options.json) {
        io.out(JSON.stringify({ tenantId: created.tenantId, apiKey: created.apiKey }));
      } else {
        io.out(`Tenant ${created.tenantId} created in region ${options.region}.`);
        io.out(`API key (shown once, keep it safe): ${created.apiKey}`);
      }
    });

  const key = tenant.command("key").description("issue and revoke API keys");
  key
    .command("issue")
    .argument("<tenantId>")
    .option("--scopes <list>", "comma-separated: read,write,ingest", "read")
    .option("--json", 'print {"keyId", "apiKey"} as JSON')
    .action(async (tenantId: string, options: { scopes: string; json?: boolean }) => {
      const scopes = parseScopes(options.scopes);
      const issued = await withRuntime(env, (runtime) =>
        issueApiKey(runtime.store, { tenantId, scopes }, cli),
      );
      io.out(
        options.json
          ? JSON.stringify({ keyId: issued.keyId, apiKey: issued.apiKey })
          : `API key ${issued.keyId} (shown once): ${issued.apiKey}`,
      );
    });
  key
    .command("revoke")
    .argument("<tenantId>")
    .argument("<keyId>")
    .action(async (tenantId: string, keyId: string) => {
      await withRuntime(env, (runtime) => revokeApiKey(runtime.store, { tenantId, keyId }, cli));
      io.out(`API key ${keyId} revoked.`);
    });
}
