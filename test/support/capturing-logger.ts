import { Writable } from "node:stream";
import { createLogger } from "@dmarc-ledger/process";

/** A logger as the processes make it (JSON, at `level`), writing its lines into `lines`. */
export function capturingLogger(lines: string[], level: "info" | "debug" = "info") {
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split("\n").filter(Boolean));
      done();
    },
  });
  return createLogger({ LOG_LEVEL: level, LOG_FORMAT: "json" }, "test", sink);
}
