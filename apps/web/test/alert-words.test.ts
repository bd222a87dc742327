import { describe, expect, it } from "vitest";
import type { AlertRecord } from "../src/api/types.js";
import {
  alertDays,
  alertTarget,
  fieldLabel,
  fieldValue,
  paramLabel,
  ruleName,
} from "../src/lib/alert-words.js";

const alert = (over: Partial<AlertRecord>): AlertRecord => ({
  id: "alrt_1",
  rule: "new_sender",
  domain: "example.com",
  period: { start: "2026-12-05T00:00:00.000Z", end: "2026-12-05T23:59:59.999Z", key: "day:2026-12-05" },
  summary: "",
  figures: {},
  items: [],
  so_far: false,
  revises: null,
  caused_by: [],
  raised_at: "2026-12-06T06:25:00.000Z",
  acknowledged_at: null,
  acknowledged_by: null,
  ...over,
});

const params = (href: string) => new URL(href, "https://dashboard.example").searchParams;
const path = (href: string) => new URL(href, "https://dashboard.example").pathname;

describe("an alert in words", () => {
  it("labels the figures it knows, and spells out any other name", () => {
    expect(fieldLabel("failedPercent")).toBe("Failing DMARC");
    expect(fieldLabel("sourceIp")).toBe("Source IP");
    expect(fieldLabel("newFigureName")).toBe("New figure name");
    expect(fieldLabel("some_snake_name")).toBe("Some snake name");
    expect(ruleName("dmarc_failure_share")).toBe("DMARC failure share");
    expect(ruleName("a_rule_to_come")).toBe("A rule to come");
    expect(paramLabel("threshold_percent")).toBe("Threshold (% of messages failing)");
  });

  it("shows values as a person reads them", () => {
    expect(fieldValue("failedPercent", 28.57)).toBe("28.57%");
    expect(fieldValue("messages", 12345)).toBe("12,345");
    expect(fieldValue("windowDays", 1)).toBe("1 day");
    expect(fieldValue("days", 3)).toBe("3 days");
    expect(fieldValue("aboveBaseline", true)).toBe("yes");
    expect(fieldValue("senderKind", "asn")).toBe("its network (AS)");
    expect(fieldValue("reporter", "")).toBe("–");
    expect(fieldValue("lastReportAt", "2026-12-01T10:20:30.000Z")).toBe("2026-12-01 10:20 UTC");
  });

  it("names one day, or the days of a window", () => {
    expect(alertDays(alert({}))).toBe("2026-12-05");
    expect(
      alertDays(
        alert({ period: { start: "2026-11-29T00:00:00.000Z", end: "2026-12-05T23:59:59.999Z", key: "" } }),
      ),
    ).toBe("2026-11-29 – 2026-12-05");
  });

  it("links each rule to the view that shows its figures, for its domain and days", () => {
    const sender = alertTarget(alert({ rule: "unapproved_sender", figures: { sender: "AS14618" } }));
    expect(path(sender.href)).toBe("/senders");
    expect(Object.fromEntries(params(sender.href))).toEqual({
      domain: "example.com",
      period: "custom",
      from: "2026-12-05",
      to: "2026-12-05",
      tab: "services",
      sender: "example.com|AS14618",
    });
    const share = alertTarget(
      alert({
        rule: "dmarc_failure_share",
        period: { start: "2026-11-29T00:00:00.000Z", end: "2026-12-05T23:59:59.999Z", key: "" },
      }),
    );
    expect(path(share.href)).toBe("/");
    expect(params(share.href).get("from")).toBe("2026-11-29");
    expect(params(share.href).get("to")).toBe("2026-12-05");
    expect(path(alertTarget(alert({ rule: "failure_report" })).href)).toBe("/failures");
    expect(path(alertTarget(alert({ rule: "no_reports" })).href)).toBe("/reporters");
    expect(path(alertTarget(alert({ rule: "dns_record_changed" })).href)).toBe("/domains");
    const hook = alertTarget(
      alert({ rule: "webhook_disabled", domain: null, figures: { endpointId: "whep_1" } }),
    );
    expect(path(hook.href)).toBe("/alerts");
    expect(params(hook.href).get("webhook")).toBe("whep_1");
  });
});
