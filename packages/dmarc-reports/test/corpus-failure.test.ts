import { describe, expect, it } from "vitest";
import { onlyFailure } from "./helpers/corpus.js";

// Expected values are read off the .eml files by hand.

describe("failure corpus", () => {
  it("DMARC Failure Report for domain.de….eml: ARF with an inline message/rfc822 sample", async () => {
    const report = await onlyFailure(
      "failure/DMARC Failure Report for domain.de (mail-from=sharepoint@domain.de, ip=10.10.10.10).eml",
    );
    expect(report).toMatchObject({
      feedbackType: "auth-failure",
      reportedDomain: "domain.de",
      arrivalDate: "2018-10-01T09:20:27Z",
      subject: "Subject",
      sourceIp: "10.10.10.10",
      authFailure: "dmarc",
      deliveryResult: "smg-policy-action",
      incidents: 1,
      originalMailFrom: "sharepoint@domain.de",
      originalRcptTo: "peter.pan@domain.de",
    });
    expect(report.headers.split("\n")).toContain("Subject: Subject");
    expect(report.headers).toContain(
      'from: "=?utf-8?B?SW50ZXJha3RpdmUgV2V0dGJld2VyYmVyLcOcYmVyc2ljaHQ=?=" <sharepoint@domain.de>',
    );
    expect(report.headers).not.toContain("<html>");
  });

  it("[Netease DMARC Failure Report] Rent Reminder.eml: base64 feedback part", async () => {
    const report = await onlyFailure("failure/[Netease DMARC Failure Report] Rent Reminder.eml");
    expect(report).toMatchObject({
      feedbackType: "auth-failure",
      reportedDomain: "cardinal.com",
      arrivalDate: "2018-09-28T08:48:42Z",
      subject: "Rent Reminder",
      sourceIp: "167.89.69.24",
      deliveryResult: "delivered",
      incidents: 1,
      originalMailFrom: "bounces+1137616-c1ad-xsj399=163.com@email.entrata.com",
      originalRcptTo: null,
    });
    const lines = report.headers.split("\n");
    expect(lines).toContain("From: 700 on Washington <info@cardinal.com>");
    expect(lines).toContain("Subject: Rent Reminder");
  });

  for (const file of ["dmarc_ruf_report_linkedin.eml", "dmarc_ruf_report_linkedin.crlf.eml"]) {
    it(`${file}: empty Original-Mail-From is null; CRLF and LF give the same report`, async () => {
      const report = await onlyFailure(`failure/${file}`);
      expect(report).toMatchObject({
        reportedDomain: "example.com",
        arrivalDate: "2019-04-30T02:09:00Z",
        subject: "Subject line, could be UTF8 encoded",
        sourceIp: "10.10.10.10",
        authFailure: "dmarc",
        deliveryResult: "delivered",
        originalMailFrom: null,
        originalRcptTo: "recipient@linkedin.com",
      });
      const lines = report.headers.split("\n");
      expect(lines).toContain("From: Sender <sender@example.com>");
      expect(lines).toContain("Subject: Subject line, could be UTF8 encoded");
      expect(report.headers).not.toContain("\r");
      expect(report.headers).not.toContain("HTML Text");
    });
  }

  it("the CRLF and LF copies of the LinkedIn report have the same identity", async () => {
    const lf = await onlyFailure("failure/dmarc_ruf_report_linkedin.eml");
    const crlf = await onlyFailure("failure/dmarc_ruf_report_linkedin.crlf.eml");
    expect(crlf.identity).toBe(lf.identity);
  });

  it("exim_plain_text_only_no_arf_part.eml: plain-text report without an ARF part", async () => {
    const report = await onlyFailure("failure/exim_plain_text_only_no_arf_part.eml");
    expect(report).toMatchObject({
      feedbackType: "auth-failure",
      reportedDomain: "example.com",
      arrivalDate: "2025-04-07T21:16:09Z",
      subject: "Payment from your account.",
      sourceIp: "203.0.113.68",
      incidents: 1,
    });
    const lines = report.headers.split("\n");
    expect(lines[0]).toBe("Received: from [203.0.113.68] (helo=smtpclient.apple)");
    expect(lines).toContain("From: <user@example.com>");
    expect(lines).toContain("Subject: Payment from your account.");
    expect(lines.at(-1)).toBe(
      "Authentication-Results:  mailgate.example.net; spf=softfail smtp.mailfrom=user@example.com",
    );
  });
});
