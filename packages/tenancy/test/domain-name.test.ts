import { describe, expect, it } from "vitest";
import {
  generateApiKey,
  hashApiKey,
  InvalidDomainError,
  normaliseDomain,
  regionOfKey,
} from "../src/index.js";

describe("normaliseDomain", () => {
  it.each([
    ["  Example.COM. ", "example.com"],
    ["mail.example.co.uk", "mail.example.co.uk"],
    ["bücher.de", "xn--bcher-kva.de"],
  ])("normalises %j to %s", (input, expected) => {
    expect(normaliseDomain(input)).toBe(expected);
  });

  it.each([
    "",
    "co.uk",
    "com",
    "exa mple.com",
    "-bad.example.com",
    "example.invalidtld",
    "a..b.com",
    "_dmarc.example.com",
  ])("refuses %j", (input) => {
    expect(() => normaliseDomain(input)).toThrow(InvalidDomainError);
  });
});

describe("API keys", () => {
  it("carry their region, at least 128 random bits, and are stored only as a hash", () => {
    const first = generateApiKey("eu");
    const second = generateApiKey("eu");
    expect(first.key).toMatch(/^dlk_eu_/);
    expect(regionOfKey(first.key)).toBe("eu");
    expect(regionOfKey(generateApiKey("global").key)).toBe("global");
    expect(first.key).not.toBe(second.key);
    expect(Buffer.from(first.key.slice("dlk_eu_".length), "base64url").length).toBeGreaterThanOrEqual(16);
    expect(first.keyHash).toBe(hashApiKey(first.key));
    expect(first.keyHash).not.toContain(first.key.slice(7));
    expect(regionOfKey("Bearer nonsense")).toBeNull();
  });
});
