import { describe, expect, it } from "vitest";
import {
  ConfigError,
  integer,
  oneOf,
  optionalPort,
  parseSettings,
  port,
  readAllSettings,
} from "../src/index.js";

const shape = {
  PORT: port(8080),
  REGION: oneOf(["global", "eu"] as const, "global"),
  RATE: integer({ min: 1, max: 1000, default: 20 }),
};

describe("parseSettings", () => {
  it("applies defaults, treating an empty string as unset", () => {
    expect(parseSettings(shape, { PORT: "" })).toEqual({ PORT: 8080, REGION: "global", RATE: 20 });
  });

  it("parses valid values", () => {
    expect(parseSettings(shape, { PORT: "0", REGION: "eu", RATE: "5" })).toEqual({
      PORT: 0,
      REGION: "eu",
      RATE: 5,
    });
  });

  it("names every wrong variable with what is allowed", () => {
    let thrown: unknown;
    try {
      parseSettings(shape, { PORT: "abc", REGION: "EU", RATE: "lots" });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    const problems = (thrown as ConfigError).problems;
    expect(problems.map((p) => p.variable).sort()).toEqual(["PORT", "RATE", "REGION"]);
    expect((thrown as Error).message).toContain('PORT: "abc" is not an integer from 0 to 65535');
    expect((thrown as Error).message).toContain('REGION: "EU" is not one of global, eu');
  });

  it("reads an optional port as off when unset or empty, and names a wrong one", () => {
    const optional = { METRICS_PORT: optionalPort() };
    expect(parseSettings(optional, {})).toEqual({ METRICS_PORT: null });
    expect(parseSettings(optional, { METRICS_PORT: "" })).toEqual({ METRICS_PORT: null });
    expect(parseSettings(optional, { METRICS_PORT: "9464" })).toEqual({ METRICS_PORT: 9464 });
    expect(parseSettings(optional, { METRICS_PORT: "0" })).toEqual({ METRICS_PORT: 0 });
    for (const wrong of ["abc", "-1", "65536", "94.64"]) {
      expect(() => parseSettings(optional, { METRICS_PORT: wrong })).toThrow(
        `METRICS_PORT: "${wrong}" is not a port from 0 to 65535`,
      );
    }
  });

  it("names the wrong variables of every reader at once", () => {
    const env = { PORT: "abc", METRICS_PORT: "x", RATE: "5" };
    let thrown: unknown;
    try {
      readAllSettings({
        first: () => parseSettings({ PORT: port(8080) }, env),
        fine: () => parseSettings({ RATE: integer({ min: 1, max: 10, default: 1 }) }, env),
        second: () => parseSettings({ METRICS_PORT: optionalPort() }, env),
      });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).problems.map((p) => p.variable)).toEqual(["PORT", "METRICS_PORT"]);
    expect(
      readAllSettings({
        rate: () => parseSettings({ RATE: integer({ min: 1, max: 10, default: 1 }) }, env),
        other: () => "read",
      }),
    ).toEqual({ rate: { RATE: 5 }, other: "read" });
  });
});
