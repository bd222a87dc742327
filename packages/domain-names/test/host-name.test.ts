import { describe, expect, it } from "vitest";
import { hostNameOf, normaliseDomain } from "../src/index.js";

describe("hostNameOf", () => {
  it("gives the lower-case ASCII form of a host name", () => {
    expect(hostNameOf(" Mail.Example.COM. ")).toBe("mail.example.com");
    expect(hostNameOf("bücher.example")).toBe("xn--bcher-kva.example");
    expect(hostNameOf("s1._domainkey.example.org")).toBe("s1._domainkey.example.org");
  });

  it("refuses what no DNS name can be", () => {
    for (const input of [
      "",
      "&dom;",
      "exa\uD800mple.com",
      "a b.com",
      "localhost",
      "-a.com",
      "a-.com",
      "a..com",
      "example.com..",
      ".example.com",
      `${"a".repeat(64)}.com`,
      `${`${"a".repeat(62)}.`.repeat(4)}com`,
      "a.com/path",
      "user@a.com",
    ]) {
      expect(hostNameOf(input), input).toBeNull();
    }
  });

  it("a tenant's domain must also be a registrable name under a public suffix", () => {
    expect(normaliseDomain("Example.com")).toBe("example.com");
    expect(() => normaliseDomain("_dmarc.example.com")).toThrow("not a valid domain name");
    expect(() => normaliseDomain("co.uk")).toThrow("public suffix");
    expect(normaliseDomain("Example.com.")).toBe("example.com");
    // One trailing dot is the root's; a second is an empty label.
    expect(() => normaliseDomain("example.com..")).toThrow('"example.com.." is not a valid domain name.');
  });
});
