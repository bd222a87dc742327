import { streams } from "@dmarc-ledger/events";
import { InvalidDomainError, normaliseDomain } from "@dmarc-ledger/tenancy";
import type { Command } from "commander";
import { CliError, type CliIO } from "../io.js";
import { withRuntime } from "../with-runtime.js";

/** One line per event: revision, time, type, who caused it, and what changed. */
function describeEvent(type: string, data: Record<string, unknown>): string {
  switch (type) {
    case "DomainAdded":
      return `added to tenant ${data.tenantId}`;
    case "DomainRemoved":
      return `removed from tenant ${data.tenantId}`;
    case "DomainGroupSet":
      return data.group === null ? "removed from its group" : `group set to "${data.group}"`;
    case "SpfOriginalUpdated":
      return `original SPF record: ${data.original}`;
    case "SafeSpfRecordComputed": {
      const records = data.records as { name: string; value: string }[];
      const added = (data.added as string[]).length;
      const removed = (data.removed as string[]).length;
      return `Safe SPF computed: ${records.length} records, lookups ${data.lookupsBefore} -> ${data.lookupsAfter}, networks +${added} -${removed}`;
    }
    case "SafeSpfComputationFailed":
      return `Safe SPF failed (${data.code}${data.retrying ? ", will retry" : ""}): ${data.message}`;
    default:
      return JSON.stringify(data);
  }
}

export function registerHistoryCommand(program: Command, io: CliIO, env: NodeJS.ProcessEnv): void {
  program
    .command("history")
    .description("print the audit trail of a domain: every event, in order, with its time and cause")
    .argument("<domain>")
    .option("--json", "print the events as JSON lines")
    .action(async (input: string, options: { json?: boolean }) => {
      let domain: string;
      try {
        domain = normaliseDomain(input);
      } catch (error) {
        if (error instanceof InvalidDomainError) throw new CliError(error.message);
        throw error;
      }
      const events = await withRuntime(env, (runtime) => runtime.store.readStream(streams.domain(domain)));
      if (events.length === 0) throw new CliError(`No history for ${domain}: it was never added.`);
      for (const event of events) {
        const data = event.data as Record<string, unknown>;
        const causedBy = String(event.metadata.causedBy ?? "unknown");
        if (options.json) {
          io.out(
            JSON.stringify({
              revision: event.revision.toString(),
              time: event.recordedAt.toISOString(),
              type: event.type,
              causedBy,
              data,
            }),
          );
        } else {
          io.out(
            `${event.revision}  ${event.recordedAt.toISOString()}  ${event.type}  by ${causedBy}: ${describeEvent(event.type, data)}`,
          );
        }
      }
    });
}
