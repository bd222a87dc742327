import type { Command } from "commander";
import { CliError, type CliIO, jsonDocument } from "../io.js";
import { withRuntime } from "../with-runtime.js";

export function registerHistoryCommand(program: Command, io: CliIO, env: NodeJS.ProcessEnv): void {
  program
    .command("history")
    .description("print the audit trail of a domain: every event, in order, with its time and cause")
    .argument("<domain>")
    .option("--json", "print the events as one JSON array")
    .action(async (input: string, options: { json?: boolean }) => {
      // Loaded when the command runs: `--help` and other commands never pay for them.
      const [{ streams }, { describeDomainEvents }, { InvalidDomainError, normaliseDomain }] =
        await Promise.all([
          import("@dmarc-ledger/events"),
          import("@dmarc-ledger/tenancy"),
          import("@dmarc-ledger/domain-names"),
        ]);
      let domain: string;
      try {
        domain = normaliseDomain(input);
      } catch (error) {
        if (error instanceof InvalidDomainError) throw new CliError(error.message);
        throw error;
      }
      const events = await withRuntime(env, (runtime) => runtime.store.readStream(streams.domain(domain)));
      if (events.length === 0) throw new CliError(`No history for ${domain}: it was never added.`);
      if (options.json) {
        io.out(
          jsonDocument(
            events.map((event) => ({
              revision: event.revision.toString(),
              time: event.recordedAt.toISOString(),
              type: event.type,
              causedBy: String(event.metadata.causedBy ?? "unknown"),
              data: event.data,
            })),
          ),
        );
        return;
      }
      const descriptions = describeDomainEvents(
        events.map((event) => ({ type: event.type, data: event.data as Record<string, unknown> })),
      );
      for (const [index, event] of events.entries()) {
        const causedBy = String(event.metadata.causedBy ?? "unknown");
        io.out(
          `${event.revision}  ${event.recordedAt.toISOString()}  ${event.type}  by ${causedBy}: ${descriptions[index]}`,
        );
      }
    });
}
