import { Writable } from "node:stream";
import { parseSettings } from "@dmarc-ledger/config";
import { describe, expect, it } from "vitest";
import { createLogger, loggingSettings } from "../src/index.js";

function sink() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split("\n").filter(Boolean));
      done();
    },
  });
  return { lines, stream };
}

describe("createLogger", () => {
  it("writes JSON lines by default and honours LOG_LEVEL", () => {
    const { lines, stream } = sink();
    const logger = createLogger(parseSettings(loggingSettings, { LOG_LEVEL: "warn" }), "t", stream);
    logger.info("hidden");
    logger.warn({ n: 1 }, "shown");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 40, name: "t", n: 1, msg: "shown" });
  });

  it("redacts the Authorization header and keys wherever a request or error carries them", () => {
    const { lines, stream } = sink();
    const logger = createLogger(parseSettings(loggingSettings, {}), "t", stream);
    logger.info({ req: { headers: { authorization: "Bearer dlk_global_secret1" } } }, "request");
    logger.info({ apiKey: "dlk_global_secret2", created: { apiKey: "dlk_global_secret3" } }, "created");
    const text = lines.join("\n");
    expect(text).not.toContain("secret");
    expect(JSON.parse(lines[0]!).req.headers.authorization).toBe("[redacted]");
  });

  it("prints human lines, not JSON, only when LOG_FORMAT=pretty", () => {
    const { lines, stream } = sink();
    const logger = createLogger(parseSettings(loggingSettings, { LOG_FORMAT: "pretty" }), "t", stream);
    logger.info("hello there");
    expect(lines.join("\n")).toContain("hello there");
    expect(() => JSON.parse(lines[0]!)).toThrow();
  });

  it("rejects an unknown level or format, naming the variable", () => {
    expect(() => parseSettings(loggingSettings, { LOG_LEVEL: "verbose", LOG_FORMAT: "xml" })).toThrow(
      /LOG_LEVEL: "verbose" is not one of.*\n.*LOG_FORMAT: "xml" is not one of json, pretty/,
    );
  });
});
