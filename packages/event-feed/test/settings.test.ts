import { ConfigError } from "@dmarc-ledger/config";
import { describe, expect, it } from "vitest";
import { eventBrokerSettingsFromEnv } from "../src/settings.js";

describe("the events broker's settings", () => {
  it("are off without EVENTS_NATS_URL, and default the stream and the subjects' prefix", () => {
    expect(eventBrokerSettingsFromEnv({})).toBeNull();
    expect(eventBrokerSettingsFromEnv({ EVENTS_NATS_URL: "" })).toBeNull();
    expect(eventBrokerSettingsFromEnv({ EVENTS_NATS_URL: "nats://127.0.0.1:4222" })).toEqual({
      url: "nats://127.0.0.1:4222",
      subjectPrefix: "dmarc-ledger",
      stream: "DMARC_LEDGER_EVENTS",
    });
  });

  it("name every wrong variable", () => {
    let problems: string[] = [];
    try {
      eventBrokerSettingsFromEnv({
        EVENTS_NATS_URL: "http://127.0.0.1:4222",
        EVENTS_NATS_STREAM: "has.dot",
        EVENTS_NATS_SUBJECT_PREFIX: "a>b",
      });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      problems = (error as ConfigError).problems.map((problem) => problem.variable);
    }
    expect(problems.sort()).toEqual(["EVENTS_NATS_STREAM", "EVENTS_NATS_SUBJECT_PREFIX", "EVENTS_NATS_URL"]);
  });
});
