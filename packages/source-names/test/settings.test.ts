import { ConfigError } from "@dmarc-ledger/config";
import { describe, expect, it } from "vitest";
import { reverseName, sameAddress } from "../src/reverse-name.js";
import { sourceIpResolverSettingsFromEnv } from "../src/settings.js";

describe("source-IP resolver settings", () => {
  it("asks reverse DNS by default, of the system's resolvers unless DNS_NAMESERVERS names others", () => {
    expect(sourceIpResolverSettingsFromEnv({}).enabled).toBe(true);
    expect(sourceIpResolverSettingsFromEnv({}).nameservers.length).toBeGreaterThan(0);
    expect(sourceIpResolverSettingsFromEnv({ SOURCE_IP_RESOLVER: "off" }).enabled).toBe(false);
    // auto: only when DNS_NAMESERVERS names the resolvers.
    expect(sourceIpResolverSettingsFromEnv({ SOURCE_IP_RESOLVER: "auto" }).enabled).toBe(false);
    expect(
      sourceIpResolverSettingsFromEnv({ SOURCE_IP_RESOLVER: "auto", DNS_NAMESERVERS: "127.0.0.1" }).enabled,
    ).toBe(true);
    const configured = sourceIpResolverSettingsFromEnv({ DNS_NAMESERVERS: "127.0.0.1:5353, [::1]:53" });
    expect(configured).toMatchObject({
      enabled: true,
      nameservers: ["127.0.0.1:5353", "[::1]:53"],
      ratePerSecond: 20,
      concurrency: 8,
      refreshAgeSeconds: 604_800,
      retryAgeSeconds: 3_600,
      timeoutMs: 2_000,
    });
    expect(sourceIpResolverSettingsFromEnv({ SOURCE_IP_RESOLVER: "on" }).enabled).toBe(true);
    expect(sourceIpResolverSettingsFromEnv({}, { defaultMode: "on" }).enabled).toBe(true);
    expect(
      sourceIpResolverSettingsFromEnv({ SOURCE_IP_RESOLVER: "off" }, { defaultMode: "on" }).enabled,
    ).toBe(false);
    expect(
      sourceIpResolverSettingsFromEnv({ SOURCE_IP_RESOLVER: "off", DNS_NAMESERVERS: "127.0.0.1" }).enabled,
    ).toBe(false);
  });

  it("names every wrong variable", () => {
    let thrown: unknown;
    try {
      sourceIpResolverSettingsFromEnv({
        SOURCE_IP_RESOLVER: "yes",
        SOURCE_IP_RESOLVE_RATE: "0",
        SOURCE_IP_REFRESH_AGE: "7d",
        DNS_NAMESERVERS: "127.0.0.1:99999",
      });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).problems.map((problem) => problem.variable).sort()).toEqual([
      "DNS_NAMESERVERS",
      "SOURCE_IP_REFRESH_AGE",
      "SOURCE_IP_RESOLVER",
      "SOURCE_IP_RESOLVE_RATE",
    ]);
  });
});

describe("reverse names", () => {
  it("writes IPv4 and IPv6 reverse names as PTR queries ask them", () => {
    expect(reverseName("192.0.2.10")).toBe("10.2.0.192.in-addr.arpa");
    expect(reverseName("2001:db8::1")).toBe(
      "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa",
    );
    expect(sameAddress("2001:db8::1", "2001:0DB8:0:0:0:0:0:1")).toBe(true);
    expect(sameAddress("192.0.2.1", "192.0.2.10")).toBe(false);
    expect(sameAddress("192.0.2.1", "::ffff:192.0.2.1")).toBe(true);
  });
});
