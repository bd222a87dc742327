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

  it("names streams by category", () => {
    expect(streamCategory(streams.aggregateReport("abc"))).toBe("aggregate-report");
    expect(streamCategory(streams.tenant("t1"))).toBe("tenant");
    expect(streamCategory("$system")).toBeNull();
  });
});
