import { describe, expect, it } from "vitest";
import { authResultsOf } from "../src/forensic-auth-results.js";

describe("the SPF and DKIM results of a reported message's headers", () => {
  it("reads the receiver's Authentication-Results, folded or not", () => {
    const headers = [
      "Received: from mail02.someserver.com",
      'Authentication-Results: mail516.prod.linkedin.com; iprev=pass policy.iprev="10.10.10.10";',
      '\tspf=neutral smtp.mailfrom="" smtp.helo="mail02.someserver.com";',
      " dkim=none (message not signed) header.d=none; dmarc=fail (p=none; dis=none) header.from=example.com",
      "Authentication-Results: relay.example; spf=pass; dkim=pass",
      "Subject: x",
    ].join("\n");
    expect(authResultsOf(headers)).toEqual({ spf: "neutral", dkim: "none" });
  });

  it("says null where the headers do not say", () => {
    expect(authResultsOf("Subject: x\nFrom: a@example.com")).toEqual({ spf: null, dkim: null });
    expect(authResultsOf("Authentication-Results: mx.example; dmarc=fail")).toEqual({
      spf: null,
      dkim: null,
    });
    // A property named like a method is not its result.
    expect(authResultsOf("Authentication-Results: mx.example; iprev=pass policy.spf=x")).toEqual({
      spf: null,
      dkim: null,
    });
  });
});
