import { Counter, type Registry } from "prom-client";

/**
 * What the intake's channels count, for /metrics: `start`'s and the API's (uploads), or the intake
 * process's own. A subpath of its own, so that `import` does not load prom-client.
 */
export interface IntakeMetrics {
  inputs: Counter<"channel" | "status">;
  rowsDropped: Counter<"channel" | "reason">;
  parseWorkerFailures: Counter;
}

export function createIntakeMetrics(registry: Registry): IntakeMetrics {
  return {
    inputs: new Counter({
      name: "intake_inputs_total",
      help: "Inputs the SMTP, IMAP and upload channels received, by channel and outcome: stored, duplicate, rejected (kept with the reason), or failed (not stored: SMTP answered 4xx, IMAP tries again, the upload got an error).",
      labelNames: ["channel", "status"] as const,
      registers: [registry],
    }),
    rowsDropped: new Counter({
      name: "intake_rows_dropped_total",
      help: "Rows of the aggregate reports the SMTP, IMAP and upload channels stored that were left out, by channel and reason (missing_source_ip, invalid_source_ip, missing_count, invalid_count, unexpanded_entity); a duplicate's rows were counted when it was first stored.",
      labelNames: ["channel", "reason"] as const,
      registers: [registry],
    }),
    parseWorkerFailures: new Counter({
      name: "intake_parse_worker_failures_total",
      help: "Parse worker threads that failed or could not start; their inputs were parsed on the event loop.",
      registers: [registry],
    }),
  };
}
