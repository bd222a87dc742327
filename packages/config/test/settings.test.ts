import { describe, expect, it } from "vitest";
import { ConfigError, integer, oneOf, parseSettings, port } from "../src/index.js";

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
});
