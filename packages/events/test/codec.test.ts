import type { RecordedEvent } from "@dmarc-ledger/event-store";
import { describe, expect, it } from "vitest";
import { decodeEvent, newEvent, streamCategory, streams, UnknownSchemaVersionError } from "../src/index.js";

function recorded(type: string, data: unknown, metadata: Record<string, unknown>): RecordedEvent {
  return {
    id: "00000000-0000-4000-8000-000000000000",
    stream: streams.domain("example.com"),
    type,
    revision: 0n,
    position: 1n,
    data,
    metadata,
    recordedAt: new Date(0),
  };
}

describe("event codec", () => {
  it("stamps the schema version and the time on new events", () => {
    const event = newEvent(
      "DomainAdded",
      { domain: "example.com", tenantId: "t1" },
      { causedBy: "process:test" },
    );
    expect(event.metadata?.schemaVersion).toBe(1);
    expect(event.metadata?.causedBy).toBe("process:test");
    expect(Date.parse(String(event.metadata?.occurredAt))).not.toBeNaN();
  });

  it("decodes known events and skips unknown types", () => {
    const decoded = decodeEvent(
      recorded("DomainAdded", { domain: "example.com", tenantId: "t1" }, { schemaVersion: 1 }),
    );
    expect(decoded?.type).toBe("DomainAdded");
    expect(decoded?.data).toEqual({ domain: "example.com", tenantId: "t1" });
    expect(decodeEvent(recorded("SomethingFromTheFuture", {}, {}))).toBeNull();
  });

  it("refuses a schema version newer than it understands", () => {
    expect(() => decodeEvent(recorded("DomainAdded", {}, { schemaVersion: 99 }))).toThrow(
      UnknownSchemaVersionError,
    );
  });

  it("lifts failure reports and rejected inputs written in clear (v1) to the personal envelope", () => {
    const v1 = {
      identity: "f1",
      feedbackType: "auth-failure",
      reportedDomain: "example.com",
      arrivalDate: null,
      subject: "Hello",
      sourceIp: "192.0.2.1",
      authFailure: "dmarc",
      deliveryResult: null,
      incidents: 1,
      headers: "From: a@example.com",
      originalMailFrom: "a@example.com",
      originalRcptTo: null,
      source: "import:x",
      warnings: [],
    };
    const lifted = decodeEvent(recorded("ForensicReportReceived", v1, { schemaVersion: 1 }));
    expect(lifted?.data).toEqual({
      identity: "f1",
      feedbackType: "auth-failure",
      reportedDomain: "example.com",
      arrivalDate: null,
      authFailure: "dmarc",
      deliveryResult: null,
      incidents: 1,
      source: "import:x",
      warnings: [],
      personal: {
        clear: {
          subject: "Hello",
          sourceIp: "192.0.2.1",
          headers: "From: a@example.com",
          originalMailFrom: "a@example.com",
          originalRcptTo: null,
        },
      },
    });
    const rejected = { source: "s", reason: "r", code: "c", sha256: "h", bytes: 2 };
    expect(decodeEvent(recorded("ReportRejected", { ...rejected, rawBase64: "aGk=" }, {}))?.data).toEqual({
      ...rejected,
      raw: { clear: { base64: "aGk=" } },
    });
    expect(decodeEvent(recorded("ReportRejected", { ...rejected, rawBase64: null }, {}))?.data).toEqual({
      ...rejected,
      raw: null,
    });
  });

  it("lifts a retention run of v1 (aggregate facts always kept then) to one that removed none of them", () => {
    const v1 = {
      ranAt: "2026-01-01T00:00:00.000Z",
      scopes: 3,
      removed: { keys: 1, failureReports: 2, rawInputs: 4 },
    };
    expect(decodeEvent(recorded("RetentionRun", v1, { schemaVersion: 1 }))?.data).toEqual({
      ...v1,
      removed: { keys: 1, failureReports: 2, rawInputs: 4, aggregateRows: 0 },
    });
    const v2 = { ...v1, removed: { ...v1.removed, aggregateRows: 9 } };
    expect(decodeEvent(recorded("RetentionRun", v2, { schemaVersion: 2 }))?.data).toEqual(v2);
  });

  it("lifts a sender decision of v1 (no addresses recorded then) to one whose members are unknown", () => {
    const v1 = { domain: "example.com", tenantId: "t1", service: "Google", range: null, approved: true };
    expect(decodeEvent(recorded("SenderApprovalSet", v1, { schemaVersion: 1 }))?.data).toEqual({
      ...v1,
      members: null,
    });
    const v2 = { ...v1, members: { addresses: ["209.85.220.41"], count: 1 } };
    expect(decodeEvent(recorded("SenderApprovalSet", v2, { schemaVersion: 2 }))?.data).toEqual(v2);
  });

  it("names streams by category", () => {
    expect(streamCategory(streams.aggregateReport("abc"))).toBe("aggregate-report");
    expect(streamCategory(streams.tenant("t1"))).toBe("tenant");
    expect(streamCategory(streams.personalData("t1"))).toBe("personal-data");
    expect(streamCategory("$system")).toBeNull();
  });
});
