import { ConfigError } from "@dmarc-ledger/config";
import type { IngestOutcome } from "@dmarc-ledger/intake";
import { describe, expect, it } from "vitest";
import { classifyOutcome, describeImap, imapSettingsFromEnv } from "../src/imap/index.js";

function problems(env: NodeJS.ProcessEnv): string[] {
  try {
    imapSettingsFromEnv(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map((problem) => problem.variable).sort();
    throw error;
  }
  return [];
}

describe("IMAP settings", () => {
  it("are off without IMAP_URL", () => {
    expect(imapSettingsFromEnv({})).toBeNull();
    expect(imapSettingsFromEnv({ IMAP_URL: "" })).toBeNull();
  });

  it("read the connection from the URL, with defaults for the rest", () => {
    const settings = imapSettingsFromEnv({
      IMAP_URL: "imaps://dmarc%40example.com:p%2Fss@mail.example.com/",
    });
    expect(settings).toEqual({
      connection: {
        host: "mail.example.com",
        port: 993,
        secure: true,
        requireStartTls: false,
        user: "dmarc@example.com",
        password: "p/ss",
        ca: null,
      },
      folder: "INBOX",
      processedFolder: "DMARC Processed",
      invalidFolder: "DMARC Invalid",
      notReportFolder: "Not DMARC",
      pollIntervalMs: 60_000,
      maxMessageBytes: 50 * 1024 * 1024,
    });
    expect(describeImap(settings!)).toBe("imaps://dmarc@example.com@mail.example.com:993/INBOX");
    expect(imapSettingsFromEnv({ IMAP_URL: "imap://u:p@127.0.0.1:1143" })?.connection).toMatchObject({
      port: 1143,
      secure: false,
      requireStartTls: false,
    });
    // Cleartext only on loopback: elsewhere imap:// must be upgraded with STARTTLS.
    expect(imapSettingsFromEnv({ IMAP_URL: "imap://u:p@mail.example.com" })?.connection).toMatchObject({
      port: 143,
      secure: false,
      requireStartTls: true,
    });
  });

  it("name every wrong variable", () => {
    expect(problems({ IMAP_URL: "https://u:p@host/", IMAP_POLL_INTERVAL_MS: "10" })).toEqual([
      "IMAP_POLL_INTERVAL_MS",
      "IMAP_URL",
    ]);
    expect(problems({ IMAP_URL: "imap://host/" })).toEqual(["IMAP_URL"]);
    expect(problems({ IMAP_URL: "imap://u:p@host/", IMAP_INVALID_FOLDER: "bad\nname" })).toEqual([
      "IMAP_INVALID_FOLDER",
    ]);
    expect(
      problems({ IMAP_URL: "imap://u:p@host/", IMAP_FOLDER: "Reports", IMAP_PROCESSED_FOLDER: "Reports" }),
    ).toEqual(["IMAP_PROCESSED_FOLDER"]);
  });

  it("never put the password in the ConfigError", () => {
    try {
      imapSettingsFromEnv({ IMAP_URL: "imap://:hunter2@host/" });
      expect.unreachable();
    } catch (error) {
      expect(String(error)).not.toContain("hunter2");
    }
  });
});

describe("classifyOutcome", () => {
  const outcome = (items: IngestOutcome["items"]): IngestOutcome => ({
    source: "imap:x",
    items,
    lastPosition: null,
  });
  const rejected = (code: string) =>
    ({ kind: "rejected", code, reason: code, sha256: "0", status: "kept" }) as const;
  const failure = { kind: "failure", identity: "f", domain: "example.com", status: "duplicate" } as const;

  it("calls a mail with any report processed, even if another part was refused", () => {
    expect(classifyOutcome(outcome([failure]))).toBe("processed");
    expect(classifyOutcome(outcome([failure, rejected("malformed_xml")]))).toBe("processed");
  });

  it("tells mail without anything report-like from broken reports", () => {
    for (const code of ["no_report_in_mail", "not_a_report", "zip_unexpected_entries"]) {
      expect(classifyOutcome(outcome([rejected(code)]))).toBe("not_report");
    }
    for (const code of ["malformed_xml", "corrupt_archive", "incomplete_report", "decompressed_too_large"]) {
      expect(classifyOutcome(outcome([rejected(code)]))).toBe("invalid");
    }
    expect(classifyOutcome(outcome([]))).toBe("invalid");
  });
});
