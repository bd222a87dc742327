import type { Command } from "commander";
import { serviceStopping } from "../control/attached-runtime.js";
import { CliError, type CliIO } from "../io.js";
import { catchUpTenantTables } from "../tenant-ref.js";
import { withBulkRuntime } from "../with-runtime.js";
import { ImportTally } from "./import-summary.js";
import { deploymentRegion } from "./tenant.js";
import { catchUpReadModels } from "./wait-for-read-models.js";

const cli = { causedBy: "process:cli" };

/** The demo tenant's name: the command reuses the tenant of that name, when there is one. */
export const demoTenantName = "demo";

function daysOption(value: string): number {
  const days = Number(value);
  if (!Number.isInteger(days) || days < 1 || days > 366)
    throw new CliError(`--days must be a whole number from 1 to 366, not "${value}"`);
  return days;
}

/** Yesterday (UTC): the last whole day a receiver has reported. */
function yesterday(): string {
  return new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
}

export function registerDemoCommand(program: Command, io: CliIO, env: NodeJS.ProcessEnv): void {
  program
    .command("demo")
    .description(
      `make a "${demoTenantName}" tenant with three domains and a key, and feed it generated reports through the intake (run again: the same tenant, a new key, days reported before counted once)`,
    )
    .option("--days <n>", "days of reports, ending yesterday (UTC)", daysOption, 90)
    .option("--seed <seed>", "the seed of the generated reports: the same seed, the same reports", "demo")
    .option("--json", 'print {"tenantId", "apiKey"} as JSON')
    .action(async (options: { days: number; seed: string; json?: boolean }) => {
      const [tenancy, { demoDomains, demoReports, policyMoveDay, policyMoveDomain }] = await Promise.all([
        import("@dmarc-ledger/tenancy"),
        import("../demo/demo-reports.js"),
      ]);
      const region = deploymentRegion(env);
      const period = { seed: options.seed, days: options.days, lastDay: yesterday() };
      const stopping = serviceStopping.getStore();
      const tally = new ImportTally();
      const { tenantId, apiKey, reused } = await withBulkRuntime(env, async (runtime) => {
        const [intake, { runtimeDataKeys }] = await Promise.all([
          import("@dmarc-ledger/intake"),
          import("@dmarc-ledger/runtime"),
        ]);
        await catchUpTenantTables(runtime);
        const named = (await tenancy.listTenants(runtime.db)).filter((t) => t.name === demoTenantName);
        if (named.length > 1) {
          throw new CliError(
            `${named.length} tenants are named "${demoTenantName}" (${named.map((t) => t.tenantId).join(", ")}); the demo feeds one: rename or leave all but one.`,
          );
        }
        const tenant = named[0]
          ? {
              tenantId: named[0].tenantId,
              apiKey: (
                await tenancy.issueApiKey(
                  runtime.store,
                  { tenantId: named[0].tenantId, scopes: [...tenancy.allScopes] },
                  cli,
                )
              ).apiKey,
              reused: true,
            }
          : {
              ...(await tenancy.createTenant(runtime.store, { name: demoTenantName, region }, cli)),
              reused: false,
            };
        for (const domain of demoDomains) {
          try {
            await tenancy.addDomain(runtime.store, { tenantId: tenant.tenantId, domain }, cli);
          } catch (error) {
            if (error instanceof tenancy.DomainOwnedElsewhereError)
              throw new CliError(
                `${domain} belongs to another tenant here; the demo needs ${demoDomains.join(", ")} (${error.message})`,
              );
            throw error;
          }
        }
        // Failure reports are sealed under the key of their domain's tenant, read from this table.
        await catchUpTenantTables(runtime);
        const settings = intake.intakeSettingsFromEnv(env);
        const deps = {
          store: runtime.store,
          db: runtime.db,
          ...intake.intakeLimits(settings),
          // Each report is a few kilobytes: parsed where it is read, no worker to start.
          parseThreads: 0,
          dataKeys: await runtimeDataKeys(runtime, env),
        };
        const encoder = new TextEncoder();
        for (const report of demoReports(period)) {
          if (stopping?.aborted) break;
          const received = await intake.receiveInput(deps, intake.bytesInput(encoder.encode(report.text)), {
            channel: "import",
            source: `demo:${report.name}`,
            tenantId: tenant.tenantId,
            metadata: cli,
          });
          tally.add(report.name, received.items);
        }
        if (!stopping?.aborted) await catchUpReadModels(runtime, stopping);
        return tenant;
      });
      if (stopping?.aborted)
        throw new CliError(
          "the service is stopping: the demo ended early. Run it again once the service runs.",
        );
      if (options.json) {
        io.out(JSON.stringify({ tenantId, apiKey }));
      } else {
        io.out(
          `Tenant "${demoTenantName}" ${tenantId} ${reused ? "reused" : "created"}: ${demoDomains.join(", ")}.`,
        );
        io.out(
          `${options.days} days of reports to ${period.lastDay} (seed "${options.seed}"); ${policyMoveDomain} moves from p=none to p=quarantine on ${policyMoveDay(period)}.`,
        );
        for (const line of tally.summary()) io.out(line);
        io.out(`API key (shown once, keep it safe): ${apiKey}`);
      }
      if (tally.rejected.length > 0) throw new CliError("", 2);
    });
}
