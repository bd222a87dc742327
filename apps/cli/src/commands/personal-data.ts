import { once } from "node:events";
import { createReadStream, createWriteStream } from "node:fs";
import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import type { Command } from "commander";
import { CliError, type CliIO } from "../io.js";
import { catchUpTenantTables, resolveTenant } from "../tenant-ref.js";
import { withBulkRuntime, withRuntime } from "../with-runtime.js";
import { catchUpReadModels } from "./wait-for-read-models.js";

const cli = { causedBy: "process:cli" };

/** Loaded when a command runs: `--help` never pays for them. */
const personalData = () => import("@dmarc-ledger/personal-data");
const erasure = () => import("@dmarc-ledger/runtime/personal-data");

/** A bar on stderr (stdout may carry the export), only when this is a terminal. */
async function progressBar(io: CliIO, format: string) {
  if (!io.isTerminal || !process.stderr.isTTY) return null;
  const { default: cliProgress } = await import("cli-progress");
  const bar = new cliProgress.SingleBar(
    { format, hideCursor: true, stream: process.stderr },
    cliProgress.Presets.shades_classic,
  );
  bar.start(1, 0, { lines: 0 });
  return bar;
}

function days(name: string) {
  return (value: string): number => {
    const parsed = /^\d+$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isSafeInteger(parsed) || parsed < 1 || parsed > 3650) {
      throw new CliError(`${name}: "${value}" is not a whole number of days from 1 to 3650`);
    }
    return parsed;
  };
}

/**
 * `tenant policy` (retention and redaction), `tenant erase` (erasure on request, confirmed by
 * repeating the tenant's id), `retention run` and `keys rotate` (docs/privacy.md).
 */
export function registerPersonalDataCommands(
  program: Command,
  tenant: Command,
  io: CliIO,
  env: NodeJS.ProcessEnv,
): void {
  tenant
    .command("policy")
    .description(
      "show or set how long a tenant's personal data is kept (days) and whether /forensic redacts it",
    )
    .argument("<tenant>", "the tenant's id or name")
    .option(
      "--failure-report-days <days>",
      "failure reports' personal fields (default 90)",
      days("--failure-report-days"),
    )
    .option(
      "--raw-input-days <days>",
      "the raw archive's bytes of its inputs (default 90)",
      days("--raw-input-days"),
    )
    .option(
      "--aggregate-days <days|keep>",
      "the aggregate facts (days, or keep: the default)",
      (value: string): number | "keep" => (value === "keep" ? value : days("--aggregate-days")(value)),
    )
    .option("--redaction <on|off>", "mask addresses and remove the subject on /forensic (default on)")
    .action(
      async (
        reference: string,
        options: {
          failureReportDays?: number;
          rawInputDays?: number;
          aggregateDays?: number | "keep";
          redaction?: string;
        },
      ) => {
        if (options.redaction !== undefined && options.redaction !== "on" && options.redaction !== "off") {
          throw new CliError(`--redaction: "${options.redaction}" is not on or off`);
        }
        const { personalDataPolicy, personalDataPolicyProjection, setPersonalDataPolicy } =
          await personalData();
        const { catchUp } = await import("@dmarc-ledger/projection-engine");
        const policy = await withRuntime(env, async (runtime) => {
          await catchUpTenantTables(runtime);
          const { tenantId } = await resolveTenant(runtime, reference);
          const current = await personalDataPolicy(runtime.db, tenantId);
          const changed =
            options.failureReportDays !== undefined ||
            options.rawInputDays !== undefined ||
            options.aggregateDays !== undefined ||
            options.redaction !== undefined;
          if (!changed) return current;
          const next = {
            ...current,
            ...(options.failureReportDays !== undefined
              ? { failureReportDays: options.failureReportDays }
              : {}),
            ...(options.rawInputDays !== undefined ? { rawInputDays: options.rawInputDays } : {}),
            ...(options.aggregateDays !== undefined
              ? { aggregateDays: options.aggregateDays === "keep" ? null : options.aggregateDays }
              : {}),
            ...(options.redaction !== undefined ? { redaction: options.redaction === "on" } : {}),
          };
          await setPersonalDataPolicy(runtime.store, tenantId, next, cli);
          await catchUp({
            store: runtime.store,
            db: runtime.db,
            projections: [personalDataPolicyProjection],
          });
          return next;
        });
        io.out(`failure reports: ${policy.failureReportDays} days`);
        io.out(`raw inputs: ${policy.rawInputDays} days`);
        io.out(`aggregate facts: ${policy.aggregateDays === null ? "kept" : `${policy.aggregateDays} days`}`);
        io.out(`redaction: ${policy.redaction ? "on" : "off"}`);
      },
    );

  tenant
    .command("erase")
    .description(
      "erase everything of a tenant that can identify a person, at once: failure reports' personal fields (events included), the raw archive's bytes, its people",
    )
    .argument("<tenant>", "the tenant's id or name")
    .option("--confirm <tenant id>", "the tenant's id again: without it, nothing is erased")
    .option("--admin <email>", "then give the tenant this fresh admin, and print their set-password link")
    .action(async (reference: string, options: { confirm?: string; admin?: string }) => {
      const { eraseTenant } = await erasure();
      if (options.admin !== undefined) {
        // Refused before anything is erased.
        const { InvalidEmailError, normaliseEmail } = await import("@dmarc-ledger/users");
        try {
          normaliseEmail(options.admin);
        } catch (error) {
          if (error instanceof InvalidEmailError) throw new CliError(`--admin: ${error.message}`);
          throw error;
        }
      }
      const done = await withRuntime(env, async (runtime) => {
        await catchUpTenantTables(runtime);
        const { tenantId, name } = await resolveTenant(runtime, reference);
        if (options.confirm !== tenantId) {
          throw new CliError(
            `This erases the personal data of tenant ${tenantId} ("${name}") for good: its failure reports' addresses, subjects and headers, the bytes of its raw inputs, and its people (their accounts and addresses; they are signed out). To go on, run again with --confirm ${tenantId}`,
          );
        }
        const erased = await eraseTenant(runtime, tenantId, cli);
        const admin = options.admin ? await freshAdmin(runtime, env, tenantId, options.admin) : null;
        await catchUpReadModels(runtime);
        return { ...erased.event, admin };
      });
      io.out(
        `Erased: ${done.keysShredded} data keys shredded, ${done.removed.failureReports} failure reports' personal fields, ${done.removed.rawInputs} raw inputs' bytes, ${done.removed.users} people.`,
      );
      if (done.admin) {
        io.out(
          `Its new admin, ${done.admin.email}, sets a password here (one-time link, until ${done.admin.expiresAt}):`,
        );
        io.out(`  ${done.admin.url}`);
      } else {
        io.out(
          `The tenant has no people now: \`dmarc-ledger user add ${reference} EMAIL --role admin\` gives it an admin.`,
        );
      }
    });

  tenant
    .command("export")
    .description(
      "write every fact of a tenant as NDJSON (its events, failure reports' fields opened), streaming; a progress bar on a terminal",
    )
    .argument("<tenant>", "the tenant's id or name")
    .option("--output <file>", "write here rather than to stdout")
    .action(async (reference: string, options: { output?: string }) => {
      const { exportTenant } = await erasure();
      const { runtimeDataKeys } = await import("@dmarc-ledger/runtime");
      await withBulkRuntime(env, async (runtime) => {
        await catchUpTenantTables(runtime);
        const { tenantId } = await resolveTenant(runtime, reference);
        const keys = await runtimeDataKeys(runtime, env);
        const bar = await progressBar(io, "exporting {bar} {percentage}% | {lines} lines");
        const output = options.output
          ? createWriteStream(resolve(io.cwd ?? process.cwd(), options.output), { mode: 0o600 })
          : null;
        let lines = 0;
        try {
          for await (const line of exportTenant(runtime, keys, tenantId, (position, head) => {
            bar?.setTotal(Math.max(Number(head), 1));
            bar?.update(Number(position), { lines });
          })) {
            lines++;
            if (output) {
              // Streaming: wait while the file's buffer is full, so memory stays bounded.
              if (!output.write(`${line}\n`)) await once(output, "drain");
            } else {
              io.out(line);
            }
          }
        } finally {
          bar?.stop();
          if (output)
            await new Promise<void>((done, fail) =>
              output.end((error?: Error | null) => (error ? fail(error) : done())),
            );
        }
        if (options.output) io.err(`${lines} lines written to ${options.output}.`);
      });
    });

  tenant
    .command("import")
    .description("bring a tenant exported by `tenant export` into this deployment (it must be new here)")
    .argument("<file>", "the NDJSON file")
    .action(async (file: string) => {
      const { importTenant, TenantImportError } = await erasure();
      const { runtimeDataKeys } = await import("@dmarc-ledger/runtime");
      const path = resolve(io.cwd ?? process.cwd(), file);
      const size = (await stat(path)).size;
      const region = env.DMARC_LEDGER_REGION === "eu" ? "eu" : "global";
      const done = await withBulkRuntime(env, async (runtime) => {
        const keys = await runtimeDataKeys(runtime, env);
        const bar = await progressBar(io, "importing {bar} {percentage}%");
        const input = createReadStream(path);
        bar?.setTotal(Math.max(size, 1));
        input.on("data", () => bar?.update(input.bytesRead));
        try {
          const imported = await importTenant(
            runtime,
            keys,
            createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY }),
            region,
          );
          await catchUpReadModels(runtime);
          return imported;
        } catch (error) {
          if (error instanceof TenantImportError || error instanceof SyntaxError) {
            throw new CliError(`${file}: ${error.message}`);
          }
          throw error;
        } finally {
          bar?.stop();
        }
      });
      io.out(
        `Imported tenant ${done.tenantId}: ${done.appended} events${done.alreadyHere ? `, ${done.alreadyHere} reports that were here already` : ""}. Its API keys work as before in a deployment of its region; \`tenant key issue\` makes new ones.`,
      );
    });

  program
    .command("retention")
    .description(
      "retention of personal data (it runs by itself in the projector, once per RETENTION_INTERVAL_MS)",
    )
    .command("run")
    .description("remove now what every tenant's retention has expired")
    .action(async () => {
      const { applyRetention } = await erasure();
      const removed = await withBulkRuntime(env, async (runtime) => {
        // Aggregate retention counts what the read models hold: up to date first.
        await catchUpReadModels(runtime);
        const done = await applyRetention(runtime, new Date(), cli);
        await catchUpReadModels(runtime);
        return done;
      });
      if (removed.scopes.length === 0 && removed.aggregates.length === 0) io.out("Nothing had expired.");
      for (const { event } of removed.scopes) {
        io.out(
          `${event.tenantId}: ${event.keysShredded.length} data keys shredded (${event.keysShredded.map((k) => k.month).join(", ") || "none"}), ${event.removed.failureReports} failure reports, ${event.removed.rawInputs} raw inputs' bytes`,
        );
      }
      for (const { event } of removed.aggregates) {
        const rows = Object.values(event.removed.rows).reduce((sum, n) => sum + n, 0);
        io.out(
          `${event.tenantId}: aggregate facts before ${event.before} of ${event.domains.length} report domains, ${event.removed.messages} messages (${rows} read-model rows)`,
        );
      }
    });

  program
    .command("keys")
    .description("the data keys of personal data")
    .command("rotate")
    .description(
      "rewrap every data key under MASTER_KEY; set MASTER_KEY to the new key and MASTER_KEY_PREVIOUS to the old one first",
    )
    .action(async () => {
      const { runtimeDataKeys } = await import("@dmarc-ledger/runtime");
      const rewrapped = await withRuntime(env, async (runtime) => {
        const keys = await runtimeDataKeys(runtime, env);
        return keys.rewrapAll(runtime.db);
      });
      io.out(`${rewrapped} data keys rewrapped under MASTER_KEY; MASTER_KEY_PREVIOUS may now be unset.`);
    });
}

/** A fresh admin for an erased tenant, and the link to set their password. */
async function freshAdmin(
  runtime: import("@dmarc-ledger/runtime").Runtime,
  env: NodeJS.ProcessEnv,
  tenantId: string,
  email: string,
): Promise<{ email: string; url: string; expiresAt: string }> {
  const [
    { addUser, InvalidEmailError, setPasswordUrl, userSettingsFromEnv },
    { dashboardUrlFromEnv },
    { runtimeDataKeys },
  ] = await Promise.all([
    import("@dmarc-ledger/users"),
    import("@dmarc-ledger/api/config"),
    import("@dmarc-ledger/runtime"),
  ]);
  try {
    const added = await addUser(
      runtime.store,
      runtime.db as never,
      await runtimeDataKeys(runtime, env),
      { tenantId, email, role: "admin", linkTtlMs: userSettingsFromEnv(env).passwordLinkTtlMs },
      cli,
    );
    return {
      email: added.email,
      url: setPasswordUrl(dashboardUrlFromEnv(env), added.link),
      expiresAt: added.link.expiresAt.toISOString(),
    };
  } catch (error) {
    if (error instanceof InvalidEmailError) throw new CliError(`--admin: ${error.message}`);
    throw error;
  }
}
