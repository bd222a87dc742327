import { describe, expect, it } from "vitest";
import { isPublicAddress } from "../src/address-guard.js";
import { alertIdOf } from "../src/alert-id.js";
import { retryDelay } from "../src/backoff.js";
import { lastPeriod } from "../src/digest.js";
import { InvalidRuleError, ruleKinds, validateParams } from "../src/rules.js";

describe("retry delays", () => {
  it("double from the base up to the cap, with jitter between half and all of it", () => {
    const low = () => 0;
    const high = () => 0.999_999;
    expect([1, 2, 3, 4].map((n) => retryDelay(n, 1000, 60_000, high))).toEqual([1000, 2000, 4000, 8000]);
    expect([1, 2, 3, 4].map((n) => retryDelay(n, 1000, 60_000, low))).toEqual([500, 1000, 2000, 4000]);
    expect(retryDelay(30, 1000, 60_000, high)).toBe(60_000);
    expect(retryDelay(10_000, 1000, 60_000, low)).toBe(30_000);
  });

  it("with the defaults (5 s to 1 h) keep retrying past a day: the schedule's sum over 28 h", () => {
    let elapsed = 0;
    let attempts = 0;
    while (elapsed < 28 * 3_600_000) elapsed += retryDelay(++attempts, 5000, 3_600_000, () => 0);
    // Ten doublings to reach the cap, then about one attempt an hour (at least half an hour apart).
    expect(attempts).toBeGreaterThan(30);
    expect(attempts).toBeLessThan(70);
  });
});

describe("addresses a webhook may reach", () => {
  it("are public unicast only", () => {
    for (const address of ["8.8.8.8", "2001:4860:4860::8888", "93.184.216.34"]) {
      expect(isPublicAddress(address), address).toBe(true);
    }
    for (const address of [
      "127.0.0.1",
      "::1",
      "10.0.0.1",
      "172.16.5.4",
      "192.168.1.1",
      "169.254.169.254",
      "fe80::1",
      "fc00::1",
      "100.64.0.1",
      "0.0.0.0",
      "224.0.0.1",
      "::ffff:127.0.0.1",
      "::ffff:10.0.0.1",
      "not an address",
    ]) {
      expect(isPublicAddress(address), address).toBe(false);
    }
  });

  it("refuses every IPv6 form that carries an IPv4 address, whatever the IPv4", () => {
    for (const address of [
      "::127.0.0.1", // IPv4-compatible
      "::7f00:1",
      "::8.8.8.8",
      "::ffff:8.8.8.8", // IPv4-mapped
      "::ffff:0:7f00:1", // IPv4-translated (RFC 6145)
      "64:ff9b::127.0.0.1", // NAT64 (RFC 6052)
      "64:ff9b::808:808",
      "64:ff9b:1::a00:1", // local-use NAT64 (RFC 8215)
      "2002:7f00:1::1", // 6to4
      "2002:808:808::1",
      "2001:0:4136:e378:8000:63bf:3fff:fdd2", // Teredo
      "2a00:1450:4001:82a:0:5efe:7f00:1", // ISATAP
      "2a00:1450:4001:82a:200:5efe:a00:1",
    ]) {
      expect(isPublicAddress(address), address).toBe(false);
    }
    for (const address of ["2a00:1450:4001:82a::200e", "2606:4700:4700::1111"]) {
      expect(isPublicAddress(address), address).toBe(true);
    }
  });
});

describe("rules", () => {
  it("name every wrong parameter at once, and fill in the defaults", () => {
    expect(validateParams("no_reports", { days: 7 })).toEqual({ days: 7, email: 1 });
    let thrown: unknown;
    try {
      validateParams("dmarc_failure_share", { threshold_percent: 101, window_days: "2", colour: 1 });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidRuleError);
    const message = (thrown as Error).message;
    for (const name of ["threshold_percent", "window_days", "colour"]) expect(message).toContain(name);
  });

  it("give an alert the same id for the same tenant, rule, domain and key, and another for any other", () => {
    const id = alertIdOf("t1", "new_sender", "example.com", "ip:192.0.2.1");
    expect(alertIdOf("t1", "new_sender", "example.com", "ip:192.0.2.1")).toBe(id);
    expect(
      new Set([
        id,
        alertIdOf("t2", "new_sender", "example.com", "ip:192.0.2.1"),
        alertIdOf("t1", "failure_report", "example.com", "ip:192.0.2.1"),
        alertIdOf("t1", "new_sender", "example.org", "ip:192.0.2.1"),
        alertIdOf("t1", "new_sender", "example.com", "ip:192.0.2.2"),
      ]).size,
    ).toBe(5);
    expect(ruleKinds).toHaveLength(12);
  });
});

describe("digest periods", () => {
  it("are the last whole UTC day, or the last whole ISO week", () => {
    const wednesday = new Date("2026-11-25T00:30:00Z");
    expect(lastPeriod("daily", wednesday)).toEqual({
      start: new Date("2026-11-24T00:00:00Z"),
      end: new Date("2026-11-25T00:00:00Z"),
    });
    expect(lastPeriod("weekly", wednesday)).toEqual({
      start: new Date("2026-11-16T00:00:00Z"),
      end: new Date("2026-11-23T00:00:00Z"),
    });
    const monday = new Date("2026-11-23T08:00:00Z");
    expect(lastPeriod("weekly", monday).end).toEqual(new Date("2026-11-23T00:00:00Z"));
  });
});
