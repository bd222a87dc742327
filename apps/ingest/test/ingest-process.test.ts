import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createTestDatabase, type TestDatabase } from "@dmarc-ledger/db/testing";
import { openRuntime } from "@dmarc-ledger/runtime";
import nodemailer from "nodemailer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startIngestProcess, waitFor } from "./support/ingest-process.js";

const report = fileURLToPath(
  new URL(
    "../../../../shared/corpus/dmarc/parsedmarc/aggregate/ikea.com!example.de!1538690400!1538776800.xml",
    import.meta.url,
  ),
);

describe("apps/ingest/src/main.ts as a process", () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase("dl_ingest_proc");
  });
  afterAll(async () => database?.drop());

  it("refuses to start on a wrong setting, naming it, in JSON", async () => {
    const { lines, exited } = await startIngestProcess({
      DATABASE_URL: database.url,
      REPORTS_DOMAIN: "reports.test",
      SMTP_MAX_CONNECTIONS_PER_IP: "none",
    });
    expect(await exited).toBe(1);
    const fatal = lines.find((line) => line.level === 60);
    expect(fatal?.msg).toContain("SMTP_MAX_CONNECTIONS_PER_IP");
  });

  it("receives a report, and stops cleanly on SIGTERM", async () => {
    const { child, lines, exited } = await startIngestProcess({
      DATABASE_URL: database.url,
      REPORTS_DOMAIN: "reports.test",
      SMTP_PORT: "0",
      SMTP_HOST: "127.0.0.1",
      LOG_LEVEL: "debug",
    });
    const listening = await waitFor(
      () => lines.find((line) => line.msg === "SMTP intake listening"),
      "the SMTP intake to listen",
    );
    const transport = nodemailer.createTransport({ host: "127.0.0.1", port: listening.port as number });
    const info = await transport.sendMail({
      from: "dmarc@receiver.test",
      to: "rua@reports.test",
      attachments: [{ filename: "ikea.xml", content: readFileSync(report) }],
    });
    transport.close();
    expect(info.response).toBe("250 OK: aggregate report stored");
    expect(lines.some((line) => line.msg.startsWith("SMTP message stored") && line.channel === "smtp")).toBe(
      true,
    );

    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(lines.at(-1)?.msg).toBe("stopped");

    const runtime = await openRuntime({ DATABASE_URL: database.url });
    try {
      const events = await runtime.store.readAll("start", 100);
      expect(events.filter((event) => event.type === "AggregateReportReceived")).toHaveLength(1);
    } finally {
      await runtime.close();
    }
  });
});
