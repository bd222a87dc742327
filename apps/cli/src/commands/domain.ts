import type { DomainStatus } from "@dmarc-ledger/onboarding";
import type { Command } from "commander";
import { CliError, type CliIO, jsonDocument } from "../io.js";
import { catchUpTenantTables, resolveTenant } from "../tenant-ref.js";
import { withRuntime } from "../with-runtime.js";

const cli = { causedBy: "process:cli" };

/** Loaded when a command runs: `--help` and commands that need neither never pay for them. */
const tenancy = () => import("@dmarc-ledger/tenancy");

/** The tenancy package's refusals become messages for the terminal, with exit status 1. */
async function asCliErrors<T>(work: () => Promise<T>): Promise<T> {
  const { InvalidDomainError, DomainOwnedElsewhereError, DomainNotFoundError, UnknownTenantError } =
    await tenancy();
  const refusals = [InvalidDomainError, DomainOwnedElsewhereError, DomainNotFoundError, UnknownTenantError];
  try {
    return await work();
  } catch (error) {
    if (refusals.some((kind) => error instanceof kind)) throw new CliError((error as Error).message);
    throw error;
  }
}

export function registerDomainCommands(program: Command, io: CliIO, env: NodeJS.ProcessEnv): void {
  const domain = program.command("domain").description("add, list and remove a tenant's domains");
  domain
    .command("add")
    .description("add a domain to a tenant")
    .argument("<tenant>", "the tenant's id or name")
    .argument("<domain>")
    .action(async (reference: string, name: string) => {
      const outcome = await withRuntime(env, async (runtime) => {
        await catchUpTenantTables(runtime);
        const { tenantId } = await resolveTenant(runtime, reference);
        const { addDomain } = await tenancy();
        return asCliErrors(() => addDomain(runtime.store, { tenantId, domain: name }, cli));
      });
      io.out(
        outcome.status === "added"
          ? `Added ${outcome.domain}.`
          : `${outcome.domain} is already on this tenant.`,
      );
    });

  domain
    .command("list")
    .description("list the domains of a tenant, or of every tenant")
    .argument("[tenant]", "the tenant's id or name")
    .option("--json", "print them as one JSON array")
    .action(async (reference: string | undefined, options: { json?: boolean }) => {
      const domains = await withRuntime(env, async (runtime) => {
        await catchUpTenantTables(runtime);
        const tenantId =
          reference === undefined ? undefined : (await resolveTenant(runtime, reference)).tenantId;
        return (await tenancy()).listTenantDomains(runtime.db, tenantId);
      });
      if (options.json) {
        io.out(jsonDocument(domains.map((d) => ({ ...d, addedAt: d.addedAt.toISOString() }))));
        return;
      }
      for (const d of domains) {
        io.out(
          `${d.domain}  tenant ${d.tenantId}  ${d.group === null ? "no group" : `group "${d.group}"`}  added ${d.addedAt.toISOString().slice(0, 19)}Z`,
        );
      }
    });

  domain
    .command("remove")
    .description("take a domain off a tenant: its reports stop counting for it, anyone may add it again")
    .argument("<tenant>", "the tenant's id or name")
    .argument("<domain>")
    .action(async (reference: string, name: string) => {
      const removed = await withRuntime(env, async (runtime) => {
        await catchUpTenantTables(runtime);
        const { tenantId } = await resolveTenant(runtime, reference);
        const { removeDomain } = await tenancy();
        return asCliErrors(() => removeDomain(runtime.store, { tenantId, domain: name }, cli));
      });
      io.out(`Removed ${removed.domain}; its history stays in the audit trail.`);
    });

  domain
    .command("status")
    .description(
      "check a domain's DMARC and SPF setup from live DNS (REPORTS_DOMAIN, SAFE_SPF_ZONE, DNS_NAMESERVERS); exit 2 while something is to change, 1 when a part could not be checked",
    )
    .argument("<domain>")
    .option("--json", "print the answer as JSON, as GET /api/domain_status gives it")
    .action(async (name: string, flags: { json?: boolean }) => {
      const [
        { domainStatusChecker, onboardingSettingsFromEnv },
        { InvalidDomainError, normaliseDomain },
        { ConfigError },
      ] = await Promise.all([
        import("@dmarc-ledger/onboarding"),
        import("@dmarc-ledger/domain-names"),
        import("@dmarc-ledger/config"),
      ]);
      let domainName: string;
      try {
        domainName = normaliseDomain(name);
      } catch (error) {
        if (error instanceof InvalidDomainError) throw new CliError(error.message);
        throw error;
      }
      let settings: ReturnType<typeof onboardingSettingsFromEnv>;
      try {
        settings = onboardingSettingsFromEnv(env);
      } catch (error) {
        if (error instanceof ConfigError) throw new CliError(error.message);
        throw error;
      }
      const status = await domainStatusChecker(settings)(domainName);
      if (flags.json) io.out(jsonDocument(status));
      else for (const line of statusLines(status)) io.out(line);
      // Status 1 when part of the check could not be made here (it did not do its job), 2 when
      // something is to change, so that scripts can wait for a good setup and stop on a bad one.
      const unchecked = uncheckedParts(status);
      if (unchecked.length > 0) {
        throw new CliError(
          `not checked: ${unchecked.join("; ")}. Set them in this command's environment as the service has them.`,
        );
      }
      if (status.problems.length > 0) throw new CliError("", 2);
    });
}

/** The parts of the check this deployment's settings left out, each with the variable it needs. */
function uncheckedParts(status: DomainStatus): string[] {
  return [
    ...(status.dmarc.rua_points_here === null
      ? [
          "whether rua and ruf reach our reports domain, and our authorisation record (REPORTS_DOMAIN is not set)",
        ]
      : []),
    ...(status.spf.reaches_safe_spf_root === null
      ? ["whether SPF reaches the Safe SPF root (SAFE_SPF_ZONE is not set)"]
      : []),
  ];
}

const yesNo = (value: boolean | null, variable: string) =>
  value === null ? `not checked (${variable} is not set)` : value ? "yes" : "no";

/** The check for a person at a terminal: what was found, then one line per change to make. */
export function statusLines(status: DomainStatus): string[] {
  const { dmarc, authorization, spf } = status;
  const lines = [
    `${status.domain}`,
    `  DMARC record:        ${dmarc.record ?? (dmarc.present ? "(several)" : "none")}`,
    `    valid:             ${dmarc.valid ? "yes" : `no${dmarc.error ? ` (${dmarc.error})` : ""}`}`,
    `    policy, pct:       ${dmarc.policy ?? "-"}, ${dmarc.pct ?? "-"}`,
    `    rua here:          ${yesNo(dmarc.rua_points_here, "REPORTS_DOMAIN")}${dmarc.rua.length ? ` (${dmarc.rua.join(", ")})` : ""}`,
    `    ruf here:          ${yesNo(dmarc.ruf_points_here, "REPORTS_DOMAIN")}${dmarc.ruf.length ? ` (${dmarc.ruf.join(", ")})` : ""}`,
    `  authorisation:       ${yesNo(authorization.served, "REPORTS_DOMAIN")}${authorization.name ? ` (${authorization.name})` : ""}`,
    `  SPF record:          ${spf.record ?? (spf.present ? "(several)" : "none")}`,
    `    Safe SPF root:     ${yesNo(spf.reaches_safe_spf_root, "SAFE_SPF_ZONE")}${spf.safe_spf_root ? ` (${spf.safe_spf_root}${spf.via ? ` by ${spf.via}` : ""})` : ""}`,
    `    DNS lookups:       ${spf.lookups}`,
    `  TLS-RPT record:      ${status.tls_rpt.record ?? (status.tls_rpt.present ? "(several)" : "none")}`,
    `    rua here:          ${yesNo(status.tls_rpt.rua_points_here, "REPORTS_DOMAIN")}${status.tls_rpt.publish ? ` (to receive TLS reports, publish at ${status.tls_rpt.name}: "${status.tls_rpt.publish}")` : ""}`,
  ];
  if (status.problems.length === 0 && uncheckedParts(status).length === 0) lines.push("Nothing to change.");
  else if (status.problems.length > 0) {
    lines.push("To change:");
    for (const problem of status.problems) lines.push(`  - ${problem.message}`);
  }
  return lines;
}
