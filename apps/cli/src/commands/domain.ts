import { addDomain, DomainOwnedElsewhereError, InvalidDomainError } from "@dmarc-ledger/tenancy";
import type { Command } from "commander";
import { CliError, type CliIO } from "../io.js";
import { withRuntime } from "../with-runtime.js";

export function registerDomainCommands(program: Command, io: CliIO, env: NodeJS.ProcessEnv): void {
  const domain = program.command("domain").description("manage a tenant's domains");
  domain
    .command("add")
    .description("add a domain to a tenant")
    .argument("<tenantId>")
    .argument("<domain>")
    .action(async (tenantId: string, name: string) => {
      const outcome = await withRuntime(env, async (runtime) => {
        try {
          return await addDomain(runtime.store, { tenantId, domain: name }, { causedBy: "process:cli" });
        } catch (error) {
          if (error instanceof InvalidDomainError || error instanceof DomainOwnedElsewhereError) {
            throw new CliError(error.message);
          }
          throw error;
        }
      });
      io.out(
        outcome.status === "added"
          ? `Added ${outcome.domain}.`
          : `${outcome.domain} is already on this tenant.`,
      );
    });
}
