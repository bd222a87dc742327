import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { createTestDatabase, type TestDatabase } from "@dmarc-ledger/db/testing";
import type { RecordedEvent } from "@dmarc-ledger/event-store";
import { ingest } from "@dmarc-ledger/intake";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import pino from "pino";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  type DeliverInput,
  type HandledMessage,
  type ImapIntake,
  type ImapIntakeOptions,
  type ImapProgressStore,
  imapSettingsFromEnv,
  openImapProgressStore,
  startImapIntake,
} from "../src/imap/index.js";
import { startTestDovecot, type TestDovecot } from "./support/dovecot.js";
import {
  append,
  compose,
  corpusFile,
  folderSubjects,
  folders,
  openMailbox,
  reportMail,
} from "./support/imap-mail.js";

/** Distinct aggregate reports of the corpus, in the three containers receivers use. */
const aggregateFiles = [
  "aggregate/fastmail.com!example.com!1516060800!1516147199!102675056.xml.gz",
  "aggregate/estadocuenta1.infonacot.gob.mx!example.com!1536853302!1536939702!2940.xml.zip",
  "aggregate/ikea.com!example.de!1538690400!1538776800.xml",
  "aggregate/usssa.com!example.com!1538784000!1538870399.xml",
  "aggregate/addisonfoods.com!example.com!1536105600!1536191999.xml",
  "aggregate/veeam.com!example.com!1530133200!1530219600.xml",
  "aggregate/protection.outlook.com!example.com!1711756800!1711843200.xml",
];

async function aggregateMail(index: number): Promise<Buffer> {
  const path = aggregateFiles[index]!;
  return reportMail(path.split("/").at(-1)!, await corpusFile(path), `aggregate ${index}`);
}

let database: TestDatabase;
let runtime: Runtime;
let progress: ImapProgressStore;
let dovecot: TestDovecot;
let logLines: string[];
let logger: pino.Logger;
const intakes: ImapIntake[] = [];

async function start(options: ImapIntakeOptions): Promise<ImapIntake> {
  const intake = await startImapIntake(options);
  intakes.push(intake);
  return intake;
}

beforeEach(async () => {
  database = await createTestDatabase();
  runtime = await openRuntime({ DATABASE_URL: database.url }, { eventStoreUrl: null });
  progress = await openImapProgressStore(runtime.database);
  logLines = [];
  logger = pino(
    { level: "debug" },
    new Writable({
      write(chunk, _encoding, callback) {
        logLines.push(chunk.toString());
        callback();
      },
    }),
  );
});

afterEach(async () => {
  // A test that failed half-way must not leave an intake reconnecting forever.
  for (const intake of intakes.splice(0)) await intake.stop();
  await dovecot?.close();
  await runtime?.close();
  await database?.drop();
});

function settingsFor(server: TestDovecot, extra: Record<string, string> = {}) {
  const settings = imapSettingsFromEnv({ IMAP_URL: server.url, ...extra });
  if (!settings) throw new Error("IMAP_URL was set");
  return settings;
}

const deliverToStore: DeliverInput = (input, source) =>
  ingest(runtime.store, input, { source, metadata: { causedBy: "process:imap" } });

async function waitFor(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function allEvents(): Promise<RecordedEvent[]> {
  return runtime.store.readAll("start", 100_000);
}

/** identity -> chunk indexes stored, in order: a report counted twice would repeat an index. */
async function aggregateChunks(): Promise<Map<string, number[]>> {
  const chunks = new Map<string, number[]>();
  for (const event of await allEvents()) {
    if (event.type !== "AggregateReportReceived") continue;
    const data = event.data as { identity: string; chunk: { index: number } };
    chunks.set(data.identity, [...(chunks.get(data.identity) ?? []), data.chunk.index]);
  }
  return chunks;
}

describe("IMAP intake", () => {
  it("stores reports and sorts mail into the processed, invalid and not-a-report folders, woken by IDLE", async () => {
    dovecot = await startTestDovecot();
    const fastmailGzip = await corpusFile(aggregateFiles[0]!);
    await append(dovecot, "INBOX", [
      await aggregateMail(0),
      await aggregateMail(1),
      await aggregateMail(2),
      await corpusFile("failure/[Netease DMARC Failure Report] Rent Reminder.eml"),
      // Report-shaped but broken: a gzip cut short.
      await reportMail("google.com!example.com!1!2.xml.gz", fastmailGzip.subarray(0, 60), "truncated gzip"),
      await compose({
        from: "colleague@example.com",
        to: "dmarc@example.com",
        subject: "lunch tomorrow?",
        text: "Shall we meet at noon?",
      }),
      await compose({
        from: "billing@supplier.example",
        to: "dmarc@example.com",
        subject: "your invoice",
        text: "Attached is your e-invoice.",
        attachments: [
          { filename: "invoice.xml", content: '<?xml version="1.0"?><Invoice><ID>42</ID></Invoice>' },
        ],
      }),
    ]);
    const handled: HandledMessage[] = [];
    // An hour between polls: mail that arrives while running must be noticed through IDLE.
    const settings = settingsFor(dovecot, { IMAP_POLL_INTERVAL_MS: "3600000" });
    const intake = await start({
      settings,
      deliver: deliverToStore,
      progress,
      logger,
      onMessageHandled: (message) => handled.push(message),
    });
    try {
      await waitFor("the first seven messages", () => handled.length === 7);
      await append(dovecot, "INBOX", [await aggregateMail(3)]);
      await waitFor("the message that arrived during IDLE", () => handled.length === 8);
    } finally {
      await intake.stop();
    }

    expect(logLines.some((line) => line.includes('"mode":"idle"'))).toBe(true);
    expect(
      await folderSubjects(dovecot, ["INBOX", folders.processed, folders.invalid, folders.notReport]),
    ).toEqual({
      INBOX: [],
      [folders.processed]: [
        "[Netease DMARC Failure Report] Rent Reminder",
        "aggregate 0",
        "aggregate 1",
        "aggregate 2",
        "aggregate 3",
      ].sort(),
      [folders.invalid]: ["truncated gzip"],
      [folders.notReport]: ["lunch tomorrow?", "your invoice"],
    });

    const chunks = await aggregateChunks();
    expect(chunks.size).toBe(4);
    for (const indexes of chunks.values()) expect(indexes).toEqual([0]);
    const events = await allEvents();
    expect(events.filter((event) => event.type === "ForensicReportReceived")).toHaveLength(1);
    const rejected = events
      .filter((event) => event.type === "ReportRejected")
      .map((event) => (event.data as { code: string }).code)
      .sort();
    expect(rejected).toHaveLength(3);
    expect(rejected.filter((code) => code === "no_report_in_mail" || code === "not_a_report")).toHaveLength(
      2,
    );
    const sources = events.map((event) => (event.data as { source: string }).source);
    expect(sources.every((source) => source.startsWith("imap:"))).toBe(true);

    const saved = await progress.load(`${dovecot.user}@127.0.0.1:${dovecot.port}/INBOX`);
    expect(saved?.lastUid).toBe(Math.max(...handled.map((message) => message.uid)));
    expect(logLines.join("")).not.toContain(dovecot.password);
  });

  it("polls a server that does not offer IDLE, and moves a message over the size limit aside unread", async () => {
    dovecot = await startTestDovecot({ withoutIdle: true });
    const handled: HandledMessage[] = [];
    const intake = await start({
      settings: settingsFor(dovecot, { IMAP_POLL_INTERVAL_MS: "1000", IMAP_MAX_MESSAGE_BYTES: "200000" }),
      deliver: deliverToStore,
      progress,
      logger,
      onMessageHandled: (message) => handled.push(message),
    });
    try {
      await waitFor("the intake to connect", () =>
        logLines.some((line) => line.includes("IMAP intake connected")),
      );
      const huge = await reportMail("huge.xml", Buffer.alloc(300_000, "<x/>"), "too large");
      await append(dovecot, "INBOX", [await aggregateMail(4), huge]);
      await waitFor("the polled messages", () => handled.length === 2);
    } finally {
      await intake.stop();
    }
    expect(logLines.some((line) => line.includes('"mode":"poll"'))).toBe(true);
    expect(handled.map((message) => message.disposition)).toEqual(["processed", "too_large"]);
    expect((await aggregateChunks()).size).toBe(1);
    expect((await allEvents()).filter((event) => event.type === "ReportRejected")).toHaveLength(0);
    expect((await folderSubjects(dovecot, [folders.invalid]))[folders.invalid]).toEqual(["too large"]);
  });

  it("reconnects with backoff after the server drops the connection and goes on where it stopped", async () => {
    dovecot = await startTestDovecot();
    const handled: HandledMessage[] = [];
    const intake = await start({
      settings: settingsFor(dovecot),
      deliver: deliverToStore,
      progress,
      logger,
      backoff: { initialMs: 100, maxMs: 800 },
      onMessageHandled: (message) => handled.push(message),
    });
    try {
      await append(dovecot, "INBOX", [await aggregateMail(0)]);
      await waitFor("the first message", () => handled.length === 1);

      await dovecot.kill();
      // Down long enough for several failed attempts, so the delay has to grow to its cap.
      await waitFor(
        "five failed reconnects",
        () => logLines.filter((line) => line.includes("reconnecting")).length >= 5,
      );
      await dovecot.start();
      await append(dovecot, "INBOX", [await aggregateMail(1), await aggregateMail(2)]);
      await waitFor("the messages after the reconnect", () => handled.length === 3);
    } finally {
      await intake.stop();
    }

    const delays = logLines
      .filter((line) => line.includes("reconnecting"))
      .map((line) => (JSON.parse(line) as { delayMs: number }).delayMs);
    expect(delays.slice(0, 5)).toEqual([100, 200, 400, 800, 800]);
    expect(Math.max(...delays)).toBe(800);
    expect(handled.map((message) => message.disposition)).toEqual(["processed", "processed", "processed"]);
    const chunks = await aggregateChunks();
    expect(chunks.size).toBe(3);
    for (const indexes of chunks.values()) expect(indexes).toEqual([0]);
    expect((await folderSubjects(dovecot, [folders.processed]))[folders.processed]).toHaveLength(3);
  });

  it("loses no report and counts none twice when stopped, or killed after delivery, in the middle of a batch", async () => {
    dovecot = await startTestDovecot();
    const mails = await Promise.all(aggregateFiles.map((_, index) => aggregateMail(index)));
    await append(dovecot, "INBOX", mails);
    const settings = settingsFor(dovecot);

    // First run: stopped after its second message.
    const first: HandledMessage[] = [];
    let firstIntake: Promise<ImapIntake> | null = null;
    let delivered = 0;
    let firstStopped: Promise<void> | null = null;
    firstIntake = start({
      settings,
      deliver: async (input, source) => {
        const outcome = await deliverToStore(input, source);
        if (++delivered === 2) firstStopped = firstIntake!.then((intake) => intake.stop());
        return outcome;
      },
      progress,
      logger,
      onMessageHandled: (message) => first.push(message),
    });
    await firstIntake;
    await waitFor("the first run to stop", () => firstStopped !== null);
    await firstStopped;
    expect(first).toHaveLength(2);

    // Second run: dies right after its first delivery was stored, before the message was moved.
    const second: HandledMessage[] = [];
    let secondIntake: Promise<ImapIntake> | null = null;
    let secondStopped: Promise<void> | null = null;
    secondIntake = start({
      settings,
      deliver: async (input, source) => {
        await deliverToStore(input, source);
        secondStopped = secondIntake!.then((intake) => intake.stop());
        throw new Error("process killed after ingesting, before the move");
      },
      progress,
      logger,
      backoff: { initialMs: 60_000, maxMs: 60_000 },
      onMessageHandled: (message) => second.push(message),
    });
    await secondIntake;
    await waitFor("the second run to stop", () => secondStopped !== null);
    await secondStopped;
    expect(second).toHaveLength(0);
    expect((await aggregateChunks()).size).toBe(3);

    // Third run: redelivers the third message (a duplicate now), then the rest.
    const third: HandledMessage[] = [];
    const intake = await start({
      settings,
      deliver: deliverToStore,
      progress,
      logger,
      onMessageHandled: (message) => third.push(message),
    });
    try {
      await waitFor("the rest of the batch", () => third.length === mails.length - 2);
    } finally {
      await intake.stop();
    }

    const statuses = third.map((message) => {
      const item = message.outcome?.items[0];
      return item?.kind === "aggregate" ? item.status : item?.kind;
    });
    expect(statuses).toEqual(["duplicate", ...Array(mails.length - 3).fill("stored")]);
    const uids = [...first, ...third].map((message) => message.uid);
    expect(new Set(uids).size).toBe(mails.length);

    const chunks = await aggregateChunks();
    expect(chunks.size).toBe(mails.length);
    for (const indexes of chunks.values()) expect(indexes).toEqual([0]);
    expect(await folderSubjects(dovecot, ["INBOX", folders.processed])).toEqual({
      INBOX: [],
      [folders.processed]: mails.map((_, index) => `aggregate ${index}`).sort(),
    });
  });

  it("starts the folder over when its UIDVALIDITY changes, and the reports it already has are duplicates", async () => {
    dovecot = await startTestDovecot();
    const settings = settingsFor(dovecot, { IMAP_FOLDER: "Reports" });
    const client = await openMailbox(dovecot);
    try {
      await client.mailboxCreate("Reports");
      await client.append("Reports", await aggregateMail(0));
      const handled: HandledMessage[] = [];
      let intake = await start({
        settings,
        deliver: deliverToStore,
        progress,
        logger,
        onMessageHandled: (message) => handled.push(message),
      });
      await waitFor("the first message", () => handled.length === 1);
      await intake.stop();
      const before = await progress.load(`${dovecot.user}@127.0.0.1:${dovecot.port}/Reports`);
      expect(before?.lastUid).toBe(1);

      // Dovecot gives a folder made again a new UIDVALIDITY (the time of day in seconds).
      await new Promise((resolve) => setTimeout(resolve, 1100));
      await client.mailboxDelete("Reports");
      await client.mailboxCreate("Reports");
      await client.append("Reports", await aggregateMail(0));
      await client.append("Reports", await aggregateMail(1));
      handled.length = 0;
      intake = await start({
        settings,
        deliver: deliverToStore,
        progress,
        logger,
        onMessageHandled: (message) => handled.push(message),
      });
      await waitFor("both messages of the renumbered folder", () => handled.length === 2);
      await intake.stop();

      expect(handled.map((message) => message.uid)).toEqual([1, 2]);
      expect(
        handled.map((message) =>
          message.outcome?.items[0]?.kind === "aggregate" ? message.outcome.items[0].status : null,
        ),
      ).toEqual(["duplicate", "stored"]);
      const after = await progress.load(`${dovecot.user}@127.0.0.1:${dovecot.port}/Reports`);
      expect(after?.uidValidity).not.toBe(before?.uidValidity);
      expect(logLines.some((line) => line.includes("UIDVALIDITY changed"))).toBe(true);
      expect((await aggregateChunks()).size).toBe(2);
    } finally {
      await client.logout();
    }
  });

  it("stops without waiting out the timeouts of a server that never answers", async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      const settings = imapSettingsFromEnv({ IMAP_URL: `imap://u:p@127.0.0.1:${port}/` });
      const intake = await start({ settings: settings!, deliver: deliverToStore, progress, logger });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const began = Date.now();
      await intake.stop();
      // The greeting timeout (16 s) would otherwise hold the stop.
      expect(Date.now() - began).toBeLessThan(12_000);
    } finally {
      silent.close();
    }
  });
});

describe("IMAP intake over TLS", () => {
  let certDir: string;
  const certificate = () => ({ certPath: join(certDir, "cert.pem"), keyPath: join(certDir, "key.pem") });

  beforeAll(() => {
    certDir = mkdtempSync(join(tmpdir(), "dl-imap-cert-"));
    const made = spawnSync(
      "openssl",
      ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"].concat([
        "-addext",
        "subjectAltName=IP:127.0.0.1",
        "-keyout",
        certificate().keyPath,
        "-out",
        certificate().certPath,
      ]),
      { encoding: "utf8" },
    );
    expect(made.status, made.stderr).toBe(0);
  });
  afterAll(() => rmSync(certDir, { recursive: true, force: true }));

  /** Dovecot's login lines for our user: each says "TLS" when the session was encrypted. */
  const logins = async () =>
    (await dovecot.log()).split("\n").filter((line) => line.includes("Login: user=<reports>"));

  it.each([
    ["imaps://, TLS from the first byte", "tls"],
    ["imap://, upgraded with STARTTLS", "starttls"],
  ])("reads reports from a server that requires TLS: %s", async (_how, mode) => {
    dovecot = await startTestDovecot({ tls: certificate() });
    await append(dovecot, "INBOX", [await aggregateMail(0)]);
    const loginsBefore = (await logins()).length;
    const handled: HandledMessage[] = [];
    const settings = imapSettingsFromEnv({
      IMAP_URL: mode === "tls" ? dovecot.tlsUrl! : dovecot.url,
      IMAP_TLS_CA_FILE: certificate().certPath,
    });
    const intake = await start({
      settings: settings!,
      deliver: deliverToStore,
      progress,
      logger,
      onMessageHandled: (message) => handled.push(message),
    });
    try {
      await waitFor("the report", () => handled.length === 1);
    } finally {
      await intake.stop();
    }
    expect(await folderSubjects(dovecot, ["INBOX", folders.processed])).toEqual({
      INBOX: [],
      [folders.processed]: ["aggregate 0"],
    });
    expect((await aggregateChunks()).size).toBe(1);
    const ours = (await logins()).slice(loginsBefore);
    expect(ours.length).toBeGreaterThan(0);
    for (const line of ours) expect(line).toMatch(/\bTLS\b/);
  });

  it("does not log in to a server whose certificate it cannot verify, and says why", async () => {
    dovecot = await startTestDovecot({ tls: certificate() });
    await append(dovecot, "INBOX", [await aggregateMail(0)]);
    const settings = imapSettingsFromEnv({ IMAP_URL: dovecot.tlsUrl! });
    const intake = await start({ settings: settings!, deliver: deliverToStore, progress, logger });
    try {
      await waitFor("the failed connection's log line", () =>
        logLines.some((line) => line.includes("IMAP intake failed") && /self[- ]signed/i.test(line)),
      );
    } finally {
      await intake.stop();
    }
    expect(await folderSubjects(dovecot, ["INBOX"])).toEqual({ INBOX: ["aggregate 0"] });
    expect(await allEvents()).toEqual([]);
  });

  it("refuses a CA file it cannot read at start", () => {
    expect(() =>
      imapSettingsFromEnv({ IMAP_URL: "imaps://u:p@127.0.0.1:993/", IMAP_TLS_CA_FILE: "/nonexistent.pem" }),
    ).toThrow(/IMAP_TLS_CA_FILE.*cannot read "\/nonexistent.pem": ENOENT/s);
  });
});
