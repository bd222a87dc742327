import { type DomainStatus, domainStatusChecker, onboardingSettingsFromEnv } from "@dmarc-ledger/onboarding";
import {
  addDomain,
  DomainOwnedElsewhereError,
  InvalidDomainError,
  normaliseDomain,
} from "@dmarc-ledger/tenancy";
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
  domain
    .command("status")
    .description("check a domain's DMARC and SPF setup from live DNS (REPORTS_DOMAIN, SAFE_SPF_ZONE)")
    .argument("<domain>")
    .option("--json", "print the answer as JSON, as GET /api/domain_status gives it")
    .action(async (name: string, flags: { json?: boolean }) => {
      let domainName: string;
      try {
        domainName = normaliseDomain(name);
      } catch (error) {
        if (error instanceof InvalidDomainError) throw new CliError(error.message);
        throw error;
      }
      const status = await domainStatusChecker(onboardingSettingsFromEnv(env))(domainName);
      if (flags.json) io.out(JSON.stringify(status, null, 2));
      else for (const line of statusLines(status)) io.out(line);
      // Exit status 2 when something is to change, so that scripts can wait for a good setup.
      if (status.problems.length > 0) throw new CliError("", 2);
    });
}

const yesNo = (value: boolean | null) => (value === null ? "not checked" : value ? "yes" : "no");

/** The check for a person at a terminal: what was found, then one line per change to make. */
export function statusLines(status: DomainStatus): string[] {
  const { dmarc, authorization, spf } = status;
  const lines = [
    `${status.domain}`,
    `  DMARC record:        ${dmarc.record ?? (dmarc.present ? "(several)" : "none")}`,
    `    valid:             ${dmarc.valid ? "yes" : `no${dmarc.error ? ` (${dmarc.error})` : ""}`}`,
    `    policy, pct:       ${dmarc.policy ?? "-"}, ${dmarc.pct ?? "-"}`,
    `    rua here:          ${yesNo(dmarc.rua_points_here)}${dmarc.rua.length ? ` (${dmarc.rua.join(", ")})` : ""}`,
    `    ruf here:          ${yesNo(dmarc.ruf_points_here)}${dmarc.ruf.length ? ` (${dmarc.ruf.join(", ")})` : ""}`,
    `  authorisation:       ${yesNo(authorization.served)}${authorization.name ? ` (${authorization.name})` : ""}`,
    `  SPF record:          ${spf.record ?? (spf.present ? "(several)" : "none")}`,
    `    Safe SPF root:     ${yesNo(spf.reaches_safe_spf_root)}${spf.safe_spf_root ? ` (${spf.safe_spf_root}${spf.via ? ` by ${spf.via}` : ""})` : ""}`,
    `    DNS lookups:       ${spf.lookups}`,
  ];
  if (status.problems.length === 0) lines.push("Nothing to change.");
  else {
    lines.push("To change:");
    for (const problem of status.problems) lines.push(`  - ${problem.message}`);
  }
  return lines;
}
