import type { ReprocessedInput } from "@dmarc-ledger/intake";
import type { Command } from "commander";
import { CliError, type CliIO } from "../io.js";
import { withBulkRuntime } from "../with-runtime.js";
import { describeDropped } from "./import-summary.js";
import { catchUpReadModels, notWaitedLine, withNoWaitOption } from "./wait-for-read-models.js";

function parseSince(value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  // ISO 8601 only (2026-11-01 or 2026-11-01T12:00:00Z): other shapes Date.parse accepts are guesses.
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(value)) {
    throw new CliError(
      `--since takes an ISO 8601 date or time (2026-11-01, 2026-11-01T12:00:00Z), not "${value}".`,
    );
  }
  const since = new Date(value);
  if (Number.isNaN(since.getTime())) throw new CliError(`--since: "${value}" is not a valid date.`);
  return since;
}

function describe(result: ReprocessedInput): string {
  const name = `${result.sha256.slice(0, 12)}… (${result.source})`;
  const was = result.before.code ? `${result.before.status} (${result.before.code})` : result.before.status;
  if (!result.after)
    return `${name}: ${was}; its bytes were not kept (larger than ARCHIVE_MAX_BYTES), skipped`;
  const reports = result.after.items.filter((item) => item.kind !== "rejected").length;
  const rejected = result.after.items.find((item) => item.kind === "rejected");
  const now =
    rejected?.kind === "rejected"
      ? `still rejected (${rejected.code}): ${rejected.reason}`
      : result.after.status;
  const dropped = result.after.items.flatMap((item) => (item.kind === "aggregate" ? item.dropped : []));
  return `${name}: ${was} -> ${now}${reports > 0 ? `, ${reports} reports` : ""}${dropped.length > 0 ? `; rows dropped: ${describeDropped(dropped)}` : ""}`;
}

export function registerReprocessCommand(program: Command, io: CliIO, env: NodeJS.ProcessEnv): void {
  const command = program
    .command("reprocess")
    .description(
      "run archived inputs that were rejected again (after a parser fix); what parses now is stored",
    )
    .option("--since <date>", "only inputs last received at or after this ISO 8601 date");
  withNoWaitOption(command).action(async (options: { since?: string; wait: boolean }) => {
    const since = parseSince(options.since);
    // Loaded when the command runs: `--help` and other commands never pay for the parsers.
    const { intakeLimits, intakeSettingsFromEnv, reprocessArchived } = await import("@dmarc-ledger/intake");
    const settings = intakeSettingsFromEnv(env);
    const counts = { stored: 0, duplicate: 0, rejected: 0, skipped: 0 };
    await withBulkRuntime(env, async (runtime) => {
      const { runtimeDataKeys } = await import("@dmarc-ledger/runtime");
      const dataKeys = await runtimeDataKeys(runtime, env);
      const results = reprocessArchived(
        { store: runtime.store, db: runtime.db, ...intakeLimits(settings), dataKeys },
        { metadata: { causedBy: "process:cli-reprocess" }, ...(since ? { since } : {}) },
      );
      for await (const result of results) {
        const line = describe(result);
        if (!result.after) counts.skipped++;
        else counts[result.after.status === "received" ? "rejected" : result.after.status]++;
        (result.after?.status === "stored" || result.after?.status === "duplicate" ? io.out : io.err)(line);
      }
      if (options.wait) await catchUpReadModels(runtime);
    });
    io.out(
      `${counts.stored + counts.duplicate + counts.rejected + counts.skipped} inputs reprocessed: ${counts.stored} now stored, ${counts.duplicate} now duplicates, ${counts.rejected} still rejected, ${counts.skipped} without their bytes.`,
    );
    if (!options.wait) io.out(notWaitedLine);
    if (counts.rejected + counts.skipped > 0) throw new CliError("", 2);
  });
}
