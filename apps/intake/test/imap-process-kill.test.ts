import { gzipSync } from "node:zlib";
import { createTestDatabase, type TestDatabase } from "@dmarc-ledger/db/testing";
import type { RecordedEvent } from "@dmarc-ledger/event-store";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import type { ImapFlow } from "imapflow";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { startTestDovecot, type TestDovecot } from "./support/dovecot.js";
import { append, corpusFile, folderSubjects, folders, openMailbox, reportMail } from "./support/imap-mail.js";
import { type IntakeProcess, startIntakeProcess, waitFor } from "./support/intake-process.js";

// Issue #11: a restart in the middle of a batch loses no report and counts none twice. Here the
// the intake is its own process (apps/intake/src/main.ts), killed with SIGKILL; the code under test
// has no hook for it: the moment is chosen from outside, in the test's database.

/** Plain-XML aggregate reports of the corpus; each is sent several times under new report ids. */
const aggregateXmlFiles = [
  "aggregate/ikea.com!example.de!1538690400!1538776800.xml",
  "aggregate/usssa.com!example.com!1538784000!1538870399.xml",
  "aggregate/addisonfoods.com!example.com!1536105600!1536191999.xml",
  "aggregate/veeam.com!example.com!1530133200!1530219600.xml",
  "aggregate/protection.outlook.com!example.com!1711756800!1711843200.xml",
  "aggregate/example.net!example.com!1529366400!1529452799.xml",
  "aggregate/rfc9990-example.net!example.com!1700000000!1700086399.xml",
];
const aggregateMails = 16;

/** Failure reports of the corpus, each a whole mail (the CRLF copy of the LinkedIn one is the same report). */
const failureFiles = [
  "failure/DMARC Failure Report for domain.de (mail-from=sharepoint@domain.de, ip=10.10.10.10).eml",
  "failure/[Netease DMARC Failure Report] Rent Reminder.eml",
  "failure/dmarc_ruf_report_linkedin.eml",
  "failure/exim_plain_text_only_no_arf_part.eml",
];

interface Batch {
  mails: Buffer[];
  /** The sum of the rows' <count> over every aggregate report sent: the messages they report. */
  messages: number;
}

/** Distinct aggregate reports (a new report id each), half of them gzipped, and the failure mails. */
async function reportBatch(): Promise<Batch> {
  const mails: Buffer[] = [];
  let messages = 0;
  for (let index = 0; index < aggregateMails; index++) {
    const path = aggregateXmlFiles[index % aggregateXmlFiles.length]!;
    const original = (await corpusFile(path)).toString("utf8");
    const xml = original.replace(
      /<report_id>([^<]*)<\/report_id>/,
      `<report_id>$1-kill-${index}</report_id>`,
    );
    if (xml === original) throw new Error(`${path} has no report_id`);
    for (const [, count] of xml.matchAll(/<count>\s*(\d+)\s*<\/count>/g)) messages += Number(count);
    const name = path.split("/").at(-1)!;
    mails.push(
      index % 2 === 0
        ? await reportMail(name, Buffer.from(xml), `aggregate ${index}`)
        : await reportMail(`${name}.gz`, gzipSync(xml), `aggregate ${index}`),
    );
  }
  for (const path of failureFiles) mails.push(await corpusFile(path));
  return { mails, messages };
}

/** The advisory lock key that holds the k-th delivery's commit. */
const commitLock = 110_011;

const running: IntakeProcess[] = [];
let database: TestDatabase | undefined;
let runtime: Runtime | undefined;
let dovecot: TestDovecot | undefined;
let watcher: pg.Client | undefined;
let mailbox: ImapFlow | undefined;

afterEach(async () => {
  // A test that failed half-way must not leave an intake behind.
  for (const intake of running.splice(0)) {
    if (intake.child.exitCode === null && intake.child.signalCode === null) {
      intake.child.kill("SIGKILL");
      await intake.exited;
    }
  }
  await mailbox?.logout().catch(() => {});
  await watcher?.end();
  await runtime?.close();
  await dovecot?.close();
  await database?.drop();
});

async function start(env: NodeJS.ProcessEnv): Promise<IntakeProcess> {
  const intake = await startIntakeProcess(env);
  running.push(intake);
  return intake;
}

function handledLines(intake: IntakeProcess) {
  return intake.lines.filter((line) => line.msg === "IMAP message handled");
}

describe("the intake process killed in the middle of an IMAP batch", () => {
  it("loses no report and counts none twice after a SIGKILL, and the next start finishes the batch", async () => {
    database = await createTestDatabase("dl_imapkill");
    [dovecot, runtime] = await Promise.all([
      startTestDovecot(),
      // Migrated here, so that the archive table exists before the process starts and can be watched.
      openRuntime({ DATABASE_URL: database.url }, { eventStoreUrl: null }),
    ]);
    const batch = await reportBatch();
    await append(dovecot, "INBOX", batch.mails);
    const sent = (await folderSubjects(dovecot, ["INBOX"])).INBOX!;
    expect(sent).toHaveLength(batch.mails.length);
    mailbox = await openMailbox(dovecot);
    const inInbox = async () => {
      const status = await mailbox!.status("INBOX", { messages: true });
      if (status === false || status.messages === undefined) throw new Error("STATUS INBOX failed");
      return status.messages;
    };

    // The kill lands where a crash does the most harm: the k-th delivery is committed (its
    // events, archive row and receipt in one transaction, packages/intake receive.ts) but the
    // mail is not moved yet. A trigger in the test database (none in the code under test) holds
    // that delivery's COMMIT on an advisory lock the test owns; the process is frozen (SIGSTOP)
    // while it waits, the lock is let go, and once the commit is announced (NOTIFY is sent on
    // commit) the frozen process is killed: it never ran after its commit.
    const killAt = Math.floor(batch.mails.length / 3);
    watcher = new pg.Client({ connectionString: database.url });
    await watcher.connect();
    await watcher.query(`
      create function test_hold_commit() returns trigger language plpgsql as $$
      begin
        if (select count(*) from raw_input_receipt) = ${killAt} then
          perform pg_advisory_xact_lock_shared(${commitLock});
        end if;
        perform pg_notify('receipt', new.source);
        return null;
      end $$`);
    await watcher.query(`
      create constraint trigger test_hold_commit after insert on raw_input_receipt
      deferrable initially deferred for each row execute function test_hold_commit()`);
    const committed: string[] = [];
    watcher.on("notification", (notification) => committed.push(notification.payload ?? ""));
    await watcher.query("listen receipt");
    await watcher.query("select pg_advisory_lock($1)", [commitLock]);

    const env = { DATABASE_URL: database.url, IMAP_URL: dovecot.url, LOG_LEVEL: "info" };
    const first = await start(env);
    await waitFor(async () => {
      if (first.child.exitCode !== null) throw new Error(`the intake process exited: ${first.stderr()}`);
      const waiting = await watcher!.query(
        "select 1 from pg_locks where locktype = 'advisory' and not granted and objid = $1",
        [commitLock],
      );
      return waiting.rowCount ? true : undefined;
    }, `delivery ${killAt} to wait at its commit`);
    first.child.kill("SIGSTOP");
    await watcher.query("select pg_advisory_unlock($1)", [commitLock]);
    await waitFor(() => (committed.length === killAt ? true : undefined), `delivery ${killAt} to commit`);
    first.child.kill("SIGKILL");
    await first.exited;
    expect(first.child.signalCode, first.stderr()).toBe("SIGKILL");
    const killedIn = committed.at(-1)!;

    // It died in the middle of the batch: killAt - 1 mails handled and moved, the k-th stored but
    // still in INBOX with the rest.
    expect(handledLines(first).map((line) => line.source)).toEqual(committed.slice(0, -1));
    expect(await inInbox()).toBe(batch.mails.length - (killAt - 1));

    const second = await start(env);
    await waitFor(async () => ((await inInbox()) === 0 ? true : undefined), "INBOX to be emptied");
    second.child.kill("SIGTERM");
    expect(await second.exited, second.stderr()).toBe(0);
    expect(second.lines.at(-1)?.msg).toBe("stopped");

    // Every mail once in the processed folder, none anywhere else.
    expect(
      await folderSubjects(dovecot, ["INBOX", folders.processed, folders.invalid, folders.notReport]),
    ).toEqual({
      INBOX: [],
      [folders.processed]: sent,
      [folders.invalid]: [],
      [folders.notReport]: [],
    });

    // Every report once: one stream each, its one chunk once; nothing rejected.
    const events: RecordedEvent[] = await runtime.store.readAll("start", 100_000);
    const chunks = new Map<string, number[]>();
    const failures = new Map<string, number>();
    let reportedMessages = 0;
    for (const event of events) {
      if (event.type === "AggregateReportReceived") {
        const data = event.data as { chunk: { index: number }; rows: { count: number }[] };
        chunks.set(event.stream, [...(chunks.get(event.stream) ?? []), data.chunk.index]);
        for (const row of data.rows) reportedMessages += row.count;
      } else if (event.type === "ForensicReportReceived") {
        failures.set(event.stream, (failures.get(event.stream) ?? 0) + 1);
      }
    }
    expect(chunks.size).toBe(aggregateMails);
    for (const indexes of chunks.values()) expect(indexes).toEqual([0]);
    expect([...failures.values()]).toEqual(failureFiles.map(() => 1));
    expect(events.filter((event) => event.type === "ReportRejected")).toHaveLength(0);
    expect(reportedMessages).toBe(batch.messages);

    // The archive has each mail once. The mail whose delivery committed just before the kill was
    // delivered again by the next start (it was still in INBOX): its row says times_received 2,
    // and that second delivery found only a duplicate. Every other mail arrived once.
    const archive = (
      await watcher.query<{ source: string; status: string; times_received: number }>(
        "select source, status, times_received from raw_input order by source",
      )
    ).rows;
    expect(archive).toHaveLength(batch.mails.length);
    expect(new Set(archive.map((row) => row.source)).size).toBe(batch.mails.length);
    for (const row of archive) {
      expect(row.source).toMatch(/^imap:/);
      expect(row.status).toBe("stored");
      expect(row.times_received).toBe(row.source === killedIn ? 2 : 1);
    }
    const receipts = await watcher.query("select 1 from raw_input_receipt");
    expect(receipts.rowCount).toBe(batch.mails.length + 1);
    const secondRun = handledLines(second);
    expect(secondRun).toHaveLength(batch.mails.length - (killAt - 1));
    expect(secondRun[0]).toMatchObject({ source: killedIn, items: [{ status: "duplicate" }] });
    for (const line of secondRun.slice(1)) expect(line.items).toMatchObject([{ status: "stored" }]);
  });
});

describe("two intake processes on one mailbox", () => {
  it("read it one at a time, and the other takes over when the reader is killed", async () => {
    database = await createTestDatabase("dl_imaptwo");
    [dovecot, runtime] = await Promise.all([
      startTestDovecot(),
      openRuntime({ DATABASE_URL: database.url }, { eventStoreUrl: null }),
    ]);
    const batch = await reportBatch();
    const half = Math.floor(batch.mails.length / 2);
    mailbox = await openMailbox(dovecot);
    const inInbox = async () => {
      const status = await mailbox!.status("INBOX", { messages: true });
      if (status === false || status.messages === undefined) throw new Error("STATUS INBOX failed");
      return status.messages;
    };
    const env = { DATABASE_URL: database.url, IMAP_URL: dovecot.url, LOG_LEVEL: "info" };
    const intakes = [await start(env), await start(env)];
    await append(dovecot, "INBOX", batch.mails.slice(0, half));
    await waitFor(async () => ((await inInbox()) === 0 ? true : undefined), "INBOX to be emptied");
    const readers = intakes.filter((intake) => handledLines(intake).length > 0);
    expect(readers).toHaveLength(1);
    const [reader] = readers;
    const other = intakes.find((intake) => intake !== reader)!;

    reader!.child.kill("SIGKILL");
    await reader!.exited;
    await append(dovecot, "INBOX", batch.mails.slice(half));
    // The reader's lease runs out (5 s), then the other reads the rest.
    await waitFor(async () => ((await inInbox()) === 0 ? true : undefined), "the other to empty INBOX");
    expect(handledLines(other).length).toBeGreaterThan(0);

    const events: RecordedEvent[] = await runtime.store.readAll("start", 100_000);
    const aggregates = events.filter((event) => event.type === "AggregateReportReceived");
    expect(new Set(aggregates.map((event) => event.stream)).size).toBe(aggregateMails);
    expect(aggregates).toHaveLength(aggregateMails);
  });
});
