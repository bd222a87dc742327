import { Counter, type Registry } from "prom-client";

/** What the intake's channels count, for /metrics: `start`'s, or the ingest process's own. */
export interface IntakeMetrics {
  inputs: Counter<"channel" | "status">;
  parseWorkerFailures: Counter;
}

export function createIntakeMetrics(registry: Registry): IntakeMetrics {
  return {
    inputs: new Counter({
      name: "intake_inputs_total",
      help: "Messages the SMTP and IMAP channels received, by channel and outcome: stored, duplicate, rejected (kept with the reason), or failed (not stored: SMTP answered 4xx, IMAP left it to try again).",
      labelNames: ["channel", "status"] as const,
      registers: [registry],
    }),
    parseWorkerFailures: new Counter({
      name: "intake_parse_worker_failures_total",
      help: "Parse worker threads that failed or could not start; their inputs were parsed on the event loop.",
      registers: [registry],
    }),
  };
}
