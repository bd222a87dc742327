import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { streams } from "@dmarc-ledger/events";
import { shredDataKeys } from "@dmarc-ledger/personal-data";
import { catchUp, rebuildBeside } from "@dmarc-ledger/projection-engine";
import { applyRetention } from "@dmarc-ledger/runtime/personal-data";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addPerson, DashboardSession } from "../support/dashboard-session.js";
import { markersInDatabase, markersInFiles } from "../support/marker-scan.js";
import {
  type Backend,
  backends,
  cli,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";

const DAY_MS = 86_400_000;
const period = "start=0&end=2000000000";

/** A failure report (ARF) about `domain`, its sample from `from` with `subject`. */
function failureMail(domain: string, from: string, subject: string, arrival: Date): string {
  return [
    "From: dmarc@receiver.example",
    "To: ruf@reports.example",
    "Subject: failure report",
    "MIME-Version: 1.0",
    'Content-Type: multipart/report; report-type=feedback-report; boundary="b"',
    "",
    "--b",
    "Content-Type: text/plain",
    "",
    "A failure report.",
    "--b",
    "Content-Type: message/feedback-report",
    "",
    "Feedback-Type: auth-failure",
    "Version: 1",
    `Original-Mail-From: <${from}>`,
    "Original-Rcpt-To: <someone@elsewhere.example>",
    `Arrival-Date: ${arrival.toUTCString()}`,
    "Source-IP: 192.0.2.1",
    `Reported-Domain: ${domain}`,
    "--b",
    "Content-Type: text/rfc822-headers",
    "",
    `From: Sender <${from}>`,
    "To: someone@elsewhere.example",
    `Subject: ${subject}`,
    "",
    "--b--",
    "",
  ].join("\r\n");
}

function aggregateXml(domain: string, reportId: string): string {
  const row = (ip: string, count: number, result: string) => `<record><row><source_ip>${ip}</source_ip>
<count>${count}</count><policy_evaluated><disposition>none</disposition><dkim>${result}</dkim><spf>${result}</spf>
</policy_evaluated></row><identifiers><header_from>${domain}</header_from></identifiers><auth_results>
<spf><domain>${domain}</domain><result>${result}</result></spf></auth_results></record>`;
  return `<?xml version="1.0"?><feedback><report_metadata><org_name>receiver.example</org_name>
<email>dmarc@receiver.example</email><report_id>${reportId}</report_id><date_range><begin>1700000000</begin>
<end>1700086399</end></date_range></report_metadata><policy_published><domain>${domain}</domain>
<p>reject</p></policy_published>${row("198.51.100.7", 12, "pass")}${row("203.0.113.5", 3, "fail")}</feedback>`;
}

describe.each(backends)("personal data on %s: sealed, retained, erased", (name, makeBackend) => {
  const tag = randomBytes(4).toString("hex");
  // Markers: what must never be found in clear, anywhere, once retention or erasure ran.
  const acmeAddress = `zq${tag}alice@acme-ledger-privacy.com`;
  const acmeSubject = `Invoice zq${tag} for Alice`;
  const betaAddress = `zq${tag}bob@beta-ledger-privacy.com`;
  const betaSubject = `Payslip zq${tag} for Bob`;
  // Arrived after beta added its domain (the one before was about a domain nobody had).
  const betaLaterAddress = `zq${tag}dave@beta-ledger-privacy.com`;
  const betaLaterSubject = `Contract zq${tag} for Dave`;
  const rejectedSubject = `Unreadable zq${tag} for Carol`;
  const markers = [
    acmeAddress,
    `zq${tag}alice`,
    acmeSubject,
    betaAddress,
    `zq${tag}bob`,
    betaSubject,
    betaLaterAddress,
    betaLaterSubject,
    rejectedSubject,
  ];
  let backend: Backend;
  let handle: ServiceHandle;
  let acme: { tenantId: string; apiKey: string };
  let beta: { tenantId: string; apiKey: string };
  const tmp = mkdtempSync(join(tmpdir(), "dl-privacy-"));
  const answers = async (key: string) =>
    Promise.all(
      ["aggregate_by_domain", "aggregate_by_source", "aggregate_by_organization"].map(
        async (endpoint) => (await handle.get(`${endpoint}?${period}`, key)).body,
      ),
    );
  const forensic = async (key: string) =>
    (await handle.get(`forensic?${period}`, key)).json as {
      total: string;
      records: Record<string, string>[];
    };

  /** Where any marker is found in the raw archive's bytes (decompressed) or the database's dump. */
  async function markersFound(): Promise<string[]> {
    const found: string[] = [];
    const { rows } = await sql<{ sha256: string; content: Uint8Array | null; compression: string | null }>`
      select sha256, content, compression from raw_input`.execute(handle.runtime.db);
    for (const row of rows) {
      if (!row.content) continue;
      const bytes = row.compression === "gzip" ? gunzipSync(row.content) : Buffer.from(row.content);
      for (const marker of markers)
        if (bytes.includes(marker)) found.push(`raw_input ${row.sha256}: ${marker}`);
    }
    // pg_dump, or the data directory's files, every one of them (heap, WAL, indexes), as bytes.
    found.push(...(await markersInDatabase(backend.env, markers)));
    return found;
  }

  beforeAll(async () => {
    backend = await makeBackend();
    acme = JSON.parse((await cli(backend.env, "tenant", "create", "acme", "--json")).out);
    beta = JSON.parse((await cli(backend.env, "tenant", "create", "beta", "--json")).out);
    expect((await cli(backend.env, "domain", "add", "acme", "acme-ledger-privacy.com")).code).toBe(0);
    const now = new Date();
    writeFileSync(join(tmp, "a.eml"), failureMail("acme-ledger-privacy.com", acmeAddress, acmeSubject, now));
    writeFileSync(join(tmp, "b.eml"), failureMail("beta-ledger-privacy.com", betaAddress, betaSubject, now));
    writeFileSync(
      join(tmp, "c.eml"),
      `From: ${acmeAddress}\r\nSubject: ${rejectedSubject}\r\n\r\nno report here\r\n`,
    );
    writeFileSync(join(tmp, "agg-a.xml"), aggregateXml("acme-ledger-privacy.com", `agg-a-${tag}`));
    writeFileSync(join(tmp, "agg-b.xml"), aggregateXml("beta-ledger-privacy.com", `agg-b-${tag}`));
    const imported = await cli(backend.env, "import", tmp);
    // 2: the mail without a report was kept, rejected, with the reason.
    expect(imported.code, imported.err).toBe(2);
    // Beta adds its domain after its first failure report came: that one is sealed under the
    // domain's own key, which beta's erasure shreds too.
    expect((await cli(backend.env, "domain", "add", "beta", "beta-ledger-privacy.com")).code).toBe(0);
    const later = join(tmp, "later");
    mkdirSync(later);
    writeFileSync(
      join(later, "b2.eml"),
      failureMail(
        "beta-ledger-privacy.com",
        betaLaterAddress,
        betaLaterSubject,
        new Date(now.getTime() + 1000),
      ),
    );
    expect((await cli(backend.env, "import", later)).code).toBe(0);
    handle = await startTestService({
      ...backend.env,
      RATE_LIMIT_PER_SECOND: "100000",
      RATE_LIMIT_BURST: "100000",
    });
  });

  afterAll(async () => {
    await handle?.stop();
    await backend?.cleanup();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("refuses to import under DATABASE_URL without MASTER_KEY, naming it", async () => {
    if (!backend.env.DATABASE_URL) return;
    const refused = await cli({ ...backend.env, MASTER_KEY: "" }, "import", join(tmp, "a.eml"));
    expect(refused.code).not.toBe(0);
    expect(refused.err).toContain("MASTER_KEY");
  });

  it("stores the personal fields sealed: in clear nowhere but the raw archive; /forensic unredacted opens them", async () => {
    for (const tenant of [acme, beta]) {
      const off = await handle.put("update_personal_data_policy", tenant.apiKey, { redaction: "off" });
      expect(off.status).toBe(200);
    }
    const a = await forensic(acme.apiKey);
    expect(a.total).toBe("1");
    expect(a.records[0]!.Subject).toBe(acmeSubject);
    expect(a.records[0]!.Headers).toContain(acmeAddress);
    const b = await forensic(beta.apiKey);
    expect(b.records.map((record) => record.Subject)).toEqual([betaLaterSubject, betaSubject]);
    // The markers are in the raw archive (the search works), and sealed everywhere else.
    const found = await markersFound();
    expect(found.some((where) => where.startsWith("raw_input") && where.endsWith(acmeSubject))).toBe(true);
    expect(found.filter((where) => !where.startsWith("raw_input"))).toEqual([]);
  });

  it("a shredded key: the report stays counted, its fields read as removed; aggregates and replay unchanged", async () => {
    const before = await answers(acme.apiKey);
    const shredded = await shredDataKeys(handle.runtime.db, acme.tenantId);
    expect(shredded).toHaveLength(1);
    const a = await forensic(acme.apiKey);
    expect(a.total).toBe("1");
    expect(a.records[0]).toMatchObject({
      Subject: "(removed)",
      Headers: "(removed)",
      Domain: "acme-ledger-privacy.com",
    });
    expect(await answers(acme.apiKey)).toEqual(before);
    await rebuildBeside({
      store: handle.runtime.store,
      db: handle.runtime.db,
      projections: allProjections,
      concurrentSessions: handle.runtime.database.concurrentSessions,
    });
    expect(await forensic(acme.apiKey)).toEqual(a);
    expect(await answers(acme.apiKey)).toEqual(before);
    // Beta's keys are its own: still readable.
    expect((await forensic(beta.apiKey)).records.map((record) => record.Subject)).toEqual([
      betaLaterSubject,
      betaSubject,
    ]);
  });

  it("retention: expired keys shredded, rows dropped, raw bytes purged, each run an event saying how much", async () => {
    // Beta keeps its data ten years: this run must leave it alone.
    expect(
      (
        await handle.put("update_personal_data_policy", beta.apiKey, {
          failure_report_days: "3650",
          raw_input_days: "3650",
        })
      ).status,
    ).toBe(200);
    const before = await answers(acme.apiKey);
    const later = new Date(Date.now() + 200 * DAY_MS);
    const done = await applyRetention(handle.runtime, later);
    const byTenant = new Map(done.scopes.map((run) => [run.event.tenantId, run.event]));
    expect(byTenant.get(acme.tenantId)?.removed).toEqual({
      failureReports: 1,
      rawInputs: 2,
      aggregateRows: null,
    });
    // The rejected mail was nobody's: its key and bytes went with the deployment's default.
    expect(byTenant.get("-")?.keysShredded.length).toBe(1);
    expect(byTenant.get("-")?.removed.rawInputs).toBe(1);
    // Beta's, and its domain's own scope (beta's policy now), are kept ten years.
    expect(byTenant.has(beta.tenantId)).toBe(false);
    expect(byTenant.has("domain:beta-ledger-privacy.com")).toBe(false);
    await catchUp({ store: handle.runtime.store, db: handle.runtime.db, projections: allProjections });
    expect(await forensic(acme.apiKey)).toEqual({ status: "SUCCESS", total: "0", records: [] });
    expect(await answers(acme.apiKey)).toEqual(before);
    const history = await handle.runtime.store.readStream(streams.personalData(acme.tenantId));
    expect(history.map((event) => event.type)).toEqual(["RetentionApplied"]);
    const runs = await handle.runtime.store.readStream(streams.retentionRuns());
    expect(runs.at(-1)?.data).toMatchObject({
      ranAt: later.toISOString(),
      removed: { keys: 1, failureReports: 1, rawInputs: 3 },
    });
    expect((await forensic(beta.apiKey)).total).toBe("2");
  });

  it("erasure: DELETE personal_data by the tenant's admin, confirmed; keys cannot; at once", async () => {
    const keyAttempt = await fetch(
      new URL(`personal_data?confirm=${beta.tenantId}`, handle.service.apiRoot),
      {
        method: "DELETE",
        headers: { Authorization: `Bearer ${beta.apiKey}` },
      },
    );
    expect(keyAttempt.status).toBe(403);
    await addPerson(
      backend.env,
      handle.service.apiRoot,
      "beta",
      `admin-${tag}@beta-ledger-privacy.com`,
      "admin",
      "a long enough password 1",
    );
    const admin = new DashboardSession(handle.service.apiRoot);
    expect(
      (await admin.signIn(`admin-${tag}@beta-ledger-privacy.com`, "a long enough password 1")).status,
    ).toBe(200);
    const unconfirmed = await admin.request("DELETE", "personal_data");
    expect(unconfirmed.status).toBe(400);
    expect((await forensic(beta.apiKey)).total).toBe("2");
    const before = await answers(beta.apiKey);
    const erased = await admin.request("DELETE", `personal_data?confirm=${beta.tenantId}`);
    expect(erased.status, JSON.stringify(erased.json)).toBe(200);
    // Its one person taken out and erased, then back as a fresh admin with a one-time link.
    expect(erased.json).toEqual({
      status: "SUCCESS",
      keys_shredded: 2,
      failure_reports: 2,
      raw_inputs: 3,
      people: 1,
      admin: {
        email: `admin-${tag}@beta-ledger-privacy.com`,
        set_password_url: expect.stringMatching(/set-password#token=/),
        expires_at: expect.any(String),
      },
    });
    expect((await admin.get("session")).status).toBe(401);
    expect(await forensic(beta.apiKey)).toEqual({ status: "SUCCESS", total: "0", records: [] });
    expect(await answers(beta.apiKey)).toEqual(before);
  });

  it(`no marker is left anywhere: ${name === "PGlite" ? "the data directory's files" : "pg_dump"}, the events included; replay rebuilds every read model`, async () => {
    const acmeBefore = await answers(acme.apiKey);
    const betaBefore = await answers(beta.apiKey);
    await rebuildBeside({
      store: handle.runtime.store,
      db: handle.runtime.db,
      projections: allProjections,
      concurrentSessions: handle.runtime.database.concurrentSessions,
    });
    expect(await answers(acme.apiKey)).toEqual(acmeBefore);
    expect(await answers(beta.apiKey)).toEqual(betaBefore);
    for (const tenant of [acme, beta]) expect((await forensic(tenant.apiKey)).total).toBe("0");
    if (!backend.env.DATABASE_URL) {
      // PGlite writes its files when it closes: read them after.
      await handle.stop();
      handle = undefined as never;
      const { openRuntime } = await import("@dmarc-ledger/runtime");
      const runtime = await openRuntime(backend.env);
      await runtime.close();
      expect(markersInFiles(backend.env.DMARC_LEDGER_DATA_DIR!, markers)).toEqual([]);
      return;
    }
    expect(await markersFound()).toEqual([]);
  });
});
