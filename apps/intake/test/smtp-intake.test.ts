import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { ConfigError } from "@dmarc-ledger/config";
import { createTestDatabase, type TestDatabase } from "@dmarc-ledger/db/testing";
import type { RecordedEvent } from "@dmarc-ledger/event-store";
import type { AggregateReportReceived, ForensicReportReceived } from "@dmarc-ledger/events";
import { ingest } from "@dmarc-ledger/intake";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import nodemailer, { type Transporter } from "nodemailer";
import MailComposer from "nodemailer/lib/mail-composer";
import pg from "pg";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parsedmarcCorpus } from "../../../test/support/corpus.js";
import { type RunningIntake, smtpSettingsFromEnv, startIntakeApp } from "../src/index.js";
import { SmtpDialogue } from "./support/smtp-dialogue.js";

const corpus = parsedmarcCorpus;
const aggregate = (name: string) => join(corpus, "aggregate", name);
const failure = (name: string) => join(corpus, "failure", name);
const niceXml = join(corpus, "extract_report", "nice-input.xml");

const silent = pino({ level: "silent" });
const baseEnv = {
  REPORTS_DOMAIN: "reports.test",
  SMTP_PORT: "0",
  SMTP_HOST: "127.0.0.1",
  SMTP_MAX_MESSAGE_BYTES: String(2 * 1024 * 1024),
  SMTP_MAX_CONNECTIONS_PER_IP: "3",
};

/** The report id an aggregate XML declares, read with a regular expression (not our parser). */
const reportIdOf = (xml: Buffer) => /<report_id>\s*([^<]*?)\s*<\/report_id>/.exec(xml.toString("utf8"))![1]!;

interface SmtpFailure extends Error {
  responseCode?: number;
}

async function sendFails(send: Promise<unknown>): Promise<SmtpFailure> {
  try {
    await send;
  } catch (error) {
    return error as SmtpFailure;
  }
  throw new Error("the message was accepted");
}

describe("SMTP intake over loopback, on PostgreSQL", () => {
  let database: TestDatabase;
  let runtime: Runtime;
  let running: RunningIntake;
  let transport: Transporter;

  beforeAll(async () => {
    database = await createTestDatabase("dl_smtp");
    runtime = await openRuntime({ DATABASE_URL: database.url });
    running = await startIntakeApp({
      store: runtime.store,
      database: runtime.database,
      settings: { smtp: smtpSettingsFromEnv(baseEnv), imap: null },
      logger: silent,
    });
    transport = nodemailer.createTransport({ host: "127.0.0.1", port: running.smtp!.port, secure: false });
  });

  afterAll(async () => {
    transport?.close();
    await running?.stop();
    await runtime?.close();
    await database?.drop();
  });

  /** The events appended while `work` ran. */
  async function appendedBy(work: () => Promise<unknown>): Promise<RecordedEvent[]> {
    const before = (await runtime.store.headPosition()) ?? "start";
    await work();
    return runtime.store.readAll(before, 10_000);
  }

  const aggregatesIn = (events: RecordedEvent[]) =>
    events.filter((e) => e.type === "AggregateReportReceived").map((e) => e.data as AggregateReportReceived);

  it("stores aggregate reports sent as attachments (XML, gzip, zip) and as the body, then answers 250", async () => {
    const veeam = readFileSync(aggregate("veeam.com!example.com!1530133200!1530219600.xml"));
    const fastmail = readFileSync(
      aggregate("fastmail.com!example.com!1516060800!1516147199!102675056.xml.gz"),
    );
    const exampleNet = readFileSync(aggregate("example.net!example.com!1529366400!1529452799.xml"));
    const cases = [
      {
        name: "XML attachment",
        reportId: reportIdOf(veeam),
        attachments: [{ filename: "r.xml", content: veeam }],
      },
      {
        name: "gzip attachment",
        reportId: reportIdOf(gunzipSync(fastmail)),
        attachments: [{ filename: "r.xml.gz", content: fastmail, contentType: "application/gzip" }],
      },
      { name: "XML body", reportId: reportIdOf(exampleNet), text: exampleNet.toString("utf8") },
    ];
    for (const { name, reportId, ...content } of cases) {
      let response = "";
      const events = await appendedBy(async () => {
        const info = await transport.sendMail({
          from: "noreply-dmarc@receiver.test",
          to: "rua@reports.test",
          subject: `Report domain: example.com (${name})`,
          ...content,
        });
        response = info.response ?? "";
      });
      expect(response, name).toMatch(/^250 OK: aggregate report stored/);
      const stored = aggregatesIn(events);
      expect(
        stored.map((e) => e.reportId),
        name,
      ).toEqual([reportId]);
      expect(stored[0]!.source, name).toMatch(/^smtp:<.+@.+>$/);
    }

    // A zip of a report already stored from its gzip copy: accepted, and counted once.
    const nice = readFileSync(niceXml);
    const gz = readFileSync(`${niceXml}.gz`);
    const zip = readFileSync(`${niceXml}.zip`);
    const first = await transport.sendMail({
      from: "a@receiver.test",
      to: "rua@reports.test",
      attachments: [{ filename: "nice.xml.gz", content: gz }],
    });
    expect(first.response).toMatch(/aggregate report stored/);
    const events = await appendedBy(async () => {
      const again = await transport.sendMail({
        from: "a@receiver.test",
        to: "RUA@Reports.Test",
        attachments: [{ filename: "nice.xml.zip", content: zip, contentType: "application/zip" }],
      });
      expect(again.response).toMatch(/^250 OK: aggregate report duplicate/);
    });
    expect(events).toEqual([]);
    const niceStream = (await runtime.store.readAll("start", 10_000)).filter(
      (e) =>
        e.type === "AggregateReportReceived" &&
        (e.data as AggregateReportReceived).reportId === reportIdOf(nice),
    );
    expect(niceStream).toHaveLength(1);
  });

  it("stores failure reports and report mails relayed as they are (raw messages)", async () => {
    for (const file of [
      failure("dmarc_ruf_report_linkedin.eml"),
      failure("DMARC Failure Report for domain.de (mail-from=sharepoint@domain.de, ip=10.10.10.10).eml"),
    ]) {
      const events = await appendedBy(() =>
        transport.sendMail({
          envelope: { from: "dmarc@receiver.test", to: ["ruf@reports.test"] },
          raw: readFileSync(file),
        }),
      );
      const forensic = events.filter((e) => e.type === "ForensicReportReceived");
      expect(forensic, file).toHaveLength(1);
      expect((forensic[0]!.data as ForensicReportReceived).source).toMatch(/^smtp:/);
    }
    // An aggregate report inside a whole mail, as a receiver sends it.
    const events = await appendedBy(() =>
      transport.sendMail({
        envelope: { from: "dmarc@receiver.test", to: ["rua@reports.test"] },
        raw: readFileSync(aggregate("twilight.eml")),
      }),
    );
    expect(aggregatesIn(events)).toHaveLength(1);
  });

  it("keeps a message that carries no report, with the reason, and answers 250", async () => {
    let response = "";
    const events = await appendedBy(async () => {
      const info = await transport.sendMail({
        from: "spam@elsewhere.test",
        to: "rua@reports.test",
        subject: "cheap watches",
        text: "nothing to see here",
      });
      response = info.response ?? "";
    });
    expect(response).toMatch(/^250 OK: no report \(no_report_in_mail\); message kept/);
    expect(events.map((e) => e.type)).toEqual(["ReportRejected"]);
  });

  it("takes postmaster's mail (RFC 5321 §4.5.1) and keeps it as a non-report", async () => {
    for (const to of ["postmaster@reports.test", "PostMaster@Reports.Test"]) {
      let response = "";
      const events = await appendedBy(async () => {
        const info = await transport.sendMail({
          from: "mailer-daemon@receiver.test",
          to,
          subject: `Undelivered mail for ${to}`,
          text: "a bounce",
        });
        expect(info.accepted, to).toHaveLength(1);
        expect(info.rejected, to).toEqual([]);
        response = info.response ?? "";
      });
      expect(response, to).toMatch(/^250 OK: no report \(no_report_in_mail\); message kept/);
      expect(events.map((e) => e.type)).toEqual(["ReportRejected"]);
    }
    // Without a domain too (RFC 5321 §4.1.1.3).
    const dialogue = await SmtpDialogue.open(running.smtp!.port);
    try {
      await dialogue.read();
      await dialogue.command("EHLO client.test");
      expect((await dialogue.command("MAIL FROM:<a@receiver.test>"))?.code).toBe(250);
      expect((await dialogue.command("RCPT TO:<Postmaster>"))?.code).toBe(250);
    } finally {
      dialogue.close();
    }
  });

  it("refuses every recipient but the report addresses and postmaster at RCPT, with 550 (no relaying)", async () => {
    for (const to of [
      "postmaster@elsewhere.test",
      "rua@elsewhere.test",
      "rua@sub.reports.test",
      "abuse@reports.test",
    ]) {
      const error = await sendFails(transport.sendMail({ from: "a@receiver.test", to, text: "<feedback/>" }));
      expect(error.responseCode, to).toBe(550);
    }
    // With one good recipient among bad ones the message goes to the good one only.
    const info = await transport.sendMail({
      from: "a@receiver.test",
      to: ["victim@example.org", "ruf@reports.test"],
      text: "hello",
    });
    expect(info.accepted).toEqual(["ruf@reports.test"]);
    expect(info.rejected).toEqual(["victim@example.org"]);
  });

  it("advertises SIZE, refuses a larger declared size at MAIL and a larger message at DATA (552)", async () => {
    const dialogue = await SmtpDialogue.open(running.smtp!.port);
    try {
      expect((await dialogue.read())?.code).toBe(220);
      const ehlo = await dialogue.command("EHLO client.test");
      expect(ehlo?.text).toContain(`SIZE ${2 * 1024 * 1024}`);
      expect(ehlo?.text).not.toContain("STARTTLS");
      expect(ehlo?.text).not.toContain("AUTH");
      const mail = await dialogue.command(`MAIL FROM:<a@receiver.test> SIZE=${2 * 1024 * 1024 + 1}`);
      expect(mail?.code).toBe(552);
    } finally {
      dialogue.close();
    }
    // A sender that does not declare the size: the message is read (and dropped), then refused.
    const events = await appendedBy(async () => {
      const error = await sendFails(
        transport.sendMail({
          from: "a@receiver.test",
          to: "rua@reports.test",
          attachments: [{ filename: "big.xml", content: Buffer.alloc(3 * 1024 * 1024, "<a/>") }],
        }),
      );
      expect(error.responseCode).toBe(552);
    });
    expect(events).toEqual([]);
  });

  it("limits connections per client address (421 past the limit)", async () => {
    const open: SmtpDialogue[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const dialogue = await SmtpDialogue.open(running.smtp!.port);
        open.push(dialogue);
        expect((await dialogue.read())?.code).toBe(220);
      }
      const extra = await SmtpDialogue.open(running.smtp!.port);
      expect((await extra.read())?.code).toBe(421);
      expect(await extra.read()).toBeNull();
      open.pop()!.close();
      // The slot comes back once the server has seen the close.
      let greeting = 0;
      for (let attempt = 0; attempt < 50 && greeting !== 220; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        const again = await SmtpDialogue.open(running.smtp!.port);
        greeting = (await again.read())?.code ?? 0;
        again.close();
      }
      expect(greeting).toBe(220);
    } finally {
      for (const dialogue of open) dialogue.close();
    }
  });

  it("closes a connection whose DATA does not end within the deadline, storing nothing", async () => {
    const slow = await startIntakeApp({
      store: runtime.store,
      database: runtime.database,
      settings: { smtp: smtpSettingsFromEnv({ ...baseEnv, SMTP_DATA_TIMEOUT_MS: "1000" }), imap: null },
      logger: silent,
    });
    const before = await runtime.store.headPosition();
    const dialogue = await SmtpDialogue.open(slow.smtp!.port);
    try {
      await dialogue.read();
      await dialogue.command("EHLO client.test");
      expect((await dialogue.command("MAIL FROM:<a@receiver.test>"))?.code).toBe(250);
      expect((await dialogue.command("RCPT TO:<rua@reports.test>"))?.code).toBe(250);
      expect((await dialogue.command("DATA"))?.code).toBe(354);
      // A byte now and then keeps the idle timeout away, but not the DATA deadline.
      const trickle = setInterval(() => dialogue.write("x"), 200);
      const answer = await dialogue.read();
      clearInterval(trickle);
      expect(answer?.code).toBe(421);
      expect(await dialogue.read()).toBeNull();
    } finally {
      dialogue.close();
      await slow.stop();
    }
    expect(await runtime.store.headPosition()).toBe(before);
  });

  it("says in the 250 which rows of a report were dropped, and why, by code", async () => {
    const record = (
      ip: string,
      count: string,
    ) => `<record><row><source_ip>${ip}</source_ip><count>${count}</count>
<policy_evaluated><disposition>none</disposition><dkim>pass</dkim><spf>pass</spf></policy_evaluated></row>
<identifiers><header_from>example.com</header_from></identifiers><auth_results/></record>`;
    const xml = `<?xml version="1.0"?><feedback><report_metadata><org_name>x.org</org_name><email>a@x.org</email>
<report_id>smtp-drops-1</report_id><date_range><begin>1700000000</begin><end>1700086399</end></date_range>
</report_metadata><policy_published><domain>example.com</domain><p>none</p></policy_published>
${record("192.0.2.1", "-5")}${record("999.1.1.1", "2")}${record("192.0.2.3", "3")}</feedback>`;
    const info = await transport.sendMail({
      from: "noreply-dmarc@receiver.test",
      to: "rua@reports.test",
      subject: "Report domain: example.com",
      attachments: [{ filename: "r.xml", content: xml }],
    });
    expect(info.response).toBe(
      "250 OK: aggregate report stored, 2 rows dropped (invalid_count 1, invalid_source_ip 1)",
    );
  });

  it("answers 451 when storage fails, and takes the same message on the retry, counted once", async () => {
    const xml = readFileSync(aggregate("usssa.com!example.com!1538784000!1538870399.xml"));
    const reportId = reportIdOf(xml);
    const message = await new MailComposer({
      from: "dmarc@receiver.test",
      to: "rua@reports.test",
      subject: "Report domain: example.com",
      attachments: [{ filename: "usssa.xml", content: xml }],
    })
      .compile()
      .build();
    const send = () =>
      transport.sendMail({
        envelope: { from: "dmarc@receiver.test", to: ["rua@reports.test"] },
        raw: message,
      });
    const storedReports = async () =>
      aggregatesIn(await runtime.store.readAll("start", 10_000)).filter((e) => e.reportId === reportId);

    // A real failure of the store: its table is away while the message arrives.
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      await admin.query("alter table events rename to events_away");
      const error = await sendFails(send());
      expect(error.responseCode).toBe(451);
      expect(error.message).toContain("4.3.0");
    } finally {
      await admin.query("alter table events_away rename to events");
      await admin.end();
    }
    expect(await storedReports()).toEqual([]);

    // The sender retries the very same bytes: stored now, and once.
    const info = await send();
    expect(info.response).toMatch(/^250 OK: aggregate report stored$/);
    expect(await storedReports()).toHaveLength(1);
    const again = await send();
    expect(again.response).toMatch(/^250 OK: aggregate report duplicate$/);
    expect(await storedReports()).toHaveLength(1);
  });
});

describe("SMTP intake settings", () => {
  it("is off without REPORTS_DOMAIN, and on with defaults with it", () => {
    expect(smtpSettingsFromEnv({})).toBeNull();
    expect(smtpSettingsFromEnv({ REPORTS_DOMAIN: "Reports.Example.COM." })).toMatchObject({
      reportAddresses: ["rua@reports.example.com", "ruf@reports.example.com"],
      port: 2525,
      maxMessageBytes: 25 * 1024 * 1024,
      tls: null,
    });
    expect(
      smtpSettingsFromEnv({ REPORTS_DOMAIN: "r.example", REPORT_ADDRESSES: "dmarc, RUA ,dmarc" })
        ?.reportAddresses,
    ).toEqual(["dmarc@r.example", "rua@r.example"]);
  });

  it("names every wrong variable", () => {
    let thrown: unknown;
    try {
      smtpSettingsFromEnv({
        REPORTS_DOMAIN: "not a domain",
        REPORT_ADDRESSES: "a b",
        SMTP_PORT: "70000",
        SMTP_MAX_MESSAGE_BYTES: "10",
      });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).problems.map((p) => p.variable).sort()).toEqual([
      "REPORTS_DOMAIN",
      "REPORT_ADDRESSES",
      "SMTP_MAX_MESSAGE_BYTES",
      "SMTP_PORT",
    ]);
  });

  it("wants both TLS files, readable", () => {
    let thrown: unknown;
    try {
      smtpSettingsFromEnv({ REPORTS_DOMAIN: "r.example", SMTP_TLS_CERT: "/nonexistent.pem" });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).problems).toEqual(
      expect.arrayContaining([
        { variable: "SMTP_TLS_CERT", message: 'cannot read "/nonexistent.pem": ENOENT' },
        { variable: "SMTP_TLS_KEY", message: "must be set when SMTP_TLS_CERT is" },
      ]),
    );
  });
});

describe("SMTP intake with STARTTLS, and stopping with a message in flight", () => {
  let database: TestDatabase;
  let runtime: Runtime;
  let certDir: string;

  beforeAll(async () => {
    database = await createTestDatabase("dl_smtp_tls");
    runtime = await openRuntime({ DATABASE_URL: database.url });
    certDir = mkdtempSync(join(tmpdir(), "dl-smtp-cert-"));
    const made = spawnSync(
      "openssl",
      ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost"].concat([
        "-keyout",
        join(certDir, "key.pem"),
        "-out",
        join(certDir, "cert.pem"),
      ]),
      { encoding: "utf8" },
    );
    expect(made.status, made.stderr).toBe(0);
  });

  afterAll(async () => {
    await runtime?.close();
    await database?.drop();
    rmSync(certDir, { recursive: true, force: true });
  });

  it("offers STARTTLS with the configured certificate and takes mail over it", async () => {
    const settings = smtpSettingsFromEnv({
      ...baseEnv,
      SMTP_TLS_CERT: join(certDir, "cert.pem"),
      SMTP_TLS_KEY: join(certDir, "key.pem"),
    });
    const running = await startIntakeApp({
      store: runtime.store,
      database: runtime.database,
      settings: { smtp: settings, imap: null },
      logger: silent,
    });
    try {
      const dialogue = await SmtpDialogue.open(running.smtp!.port);
      await dialogue.read();
      const ehlo = await dialogue.command("EHLO client.test");
      dialogue.close();
      expect(ehlo?.text).toContain("STARTTLS");
      expect(ehlo?.text).not.toContain("AUTH");

      const transport = nodemailer.createTransport({
        host: "127.0.0.1",
        port: running.smtp!.port,
        secure: false,
        requireTLS: true,
        tls: { rejectUnauthorized: false },
      });
      const info = await transport.sendMail({
        envelope: { from: "dmarc@receiver.test", to: ["ruf@reports.test"] },
        raw: readFileSync(failure("dmarc_ruf_report_linkedin.eml")),
      });
      transport.close();
      expect(info.response).toMatch(/^250 OK: failure report (stored|duplicate)$/);
    } finally {
      await running.stop();
    }
  });

  it("on stop, takes no new connection but stores and answers the message in flight", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let arrived!: () => void;
    const inDelivery = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const running = await startIntakeApp({
      store: runtime.store,
      database: runtime.database,
      settings: { smtp: smtpSettingsFromEnv(baseEnv), imap: null },
      logger: silent,
      // The real intake, held until the test has asked the server to stop.
      deliver: async (input, source) => {
        arrived();
        await gate;
        return ingest(runtime.store, input, { source, metadata: { causedBy: "test" } });
      },
    });
    const port = running.smtp!.port;
    const transport = nodemailer.createTransport({ host: "127.0.0.1", port, secure: false });
    const sent = transport.sendMail({
      from: "dmarc@receiver.test",
      to: "rua@reports.test",
      attachments: [
        {
          filename: "r.xml",
          content: readFileSync(aggregate("ikea.com!example.de!1538690400!1538776800.xml")),
        },
      ],
    });
    await inDelivery;
    let stopped = false;
    const stopping = running.stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(stopped).toBe(false);
    const refused = await SmtpDialogue.open(port).then(
      (dialogue) => {
        dialogue.close();
        return false;
      },
      (error: NodeJS.ErrnoException) => error.code === "ECONNREFUSED",
    );
    expect(refused).toBe(true);
    release();
    const info = await sent;
    expect(info.response).toMatch(/^250 OK: aggregate report stored$/);
    await stopping;
    transport.close();
  });
});
