/**
 * Issue #26: what sealing personal data costs the import. Inputs per second through receiveInput
 * (what `dmarc-ledger import` runs, `BENCH_WINDOW` inputs in flight as its window has them, on
 * PostgreSQL), with data keys (every failure report's personal fields and every rejected input's
 * bytes sealed under its tenant's key of the month: a key lookup, the domain's tenant and AES-GCM)
 * and without (in clear), measured in the same run, in alternating rounds so that the machine's
 * drift falls on both. Two input sets: failure reports only (every input sealed: the worst case)
 * and a mix of 9 aggregate reports to 1 failure report (about what arrives). Target: with keys at
 * least 90% of without. `BENCH_INPUTS` (default 2,000 a round), `BENCH_ROUNDS` (default 3),
 * `BENCH_WINDOW` (default 8).
 */
import { randomBytes } from "node:crypto";
import { createTestDatabase } from "@dmarc-ledger/db/testing";
import { bytesInput, type IntakeDeps, receiveInput } from "@dmarc-ledger/intake";
import { openRuntime, runtimeDataKeys } from "@dmarc-ledger/runtime";
import { addDomain, createTenant } from "@dmarc-ledger/tenancy";

const inputsPerRound = Number(process.env.BENCH_INPUTS ?? 2000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const window = Number(process.env.BENCH_WINDOW ?? 8);
const target = 0.9;
const domain = "privacy-bench.com";

const log = (line: string) => console.log(line);
const progress = (line: string) => process.stderr.write(`  … ${line}\n`);

let serial = 0;

function failureMail(): Buffer {
  const n = serial++;
  return Buffer.from(
    [
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
      `Original-Mail-From: <person${n}@${domain}>`,
      "Original-Rcpt-To: <someone@elsewhere.example>",
      `Arrival-Date: ${new Date(1_700_000_000_000 + n * 1000).toUTCString()}`,
      "Source-IP: 192.0.2.1",
      `Reported-Domain: ${domain}`,
      "--b",
      "Content-Type: text/rfc822-headers",
      "",
      `Received: from mx${n}.elsewhere.example (mx.elsewhere.example [198.51.100.${n % 250}])`,
      `From: Person ${n} <person${n}@${domain}>`,
      "To: someone@elsewhere.example",
      `Subject: Invoice ${n} for you`,
      `Message-ID: <${n}.${randomBytes(6).toString("hex")}@${domain}>`,
      "",
      "--b--",
      "",
    ].join("\r\n"),
  );
}

function aggregateXml(): Buffer {
  const n = serial++;
  const rows = Array.from(
    { length: 20 },
    (_, i) => `<record><row><source_ip>198.51.${i}.${n % 250}</source_ip><count>${1 + i}</count>
<policy_evaluated><disposition>none</disposition><dkim>pass</dkim><spf>pass</spf></policy_evaluated></row>
<identifiers><header_from>${domain}</header_from></identifiers><auth_results><dkim><domain>${domain}</domain>
<result>pass</result></dkim><spf><domain>${domain}</domain><result>pass</result></spf></auth_results></record>`,
  ).join("");
  return Buffer.from(`<?xml version="1.0"?><feedback><report_metadata><org_name>receiver.example</org_name>
<email>dmarc@receiver.example</email><report_id>bench-${n}-${randomBytes(4).toString("hex")}</report_id>
<date_range><begin>1700000000</begin><end>1700086399</end></date_range></report_metadata>
<policy_published><domain>${domain}</domain><p>reject</p></policy_published>${rows}</feedback>`);
}

const sets: { name: string; next: (index: number) => Buffer }[] = [
  { name: "failure reports only", next: () => failureMail() },
  { name: "9 aggregate : 1 failure", next: (index) => (index % 10 === 9 ? failureMail() : aggregateXml()) },
];

async function round(deps: IntakeDeps, next: (index: number) => Buffer): Promise<number> {
  const inputs = Array.from({ length: inputsPerRound }, (_, index) => next(index));
  const started = performance.now();
  let at = 0;
  const worker = async () => {
    while (at < inputs.length) {
      const input = inputs[at++]!;
      const received = await receiveInput(deps, bytesInput(input), {
        channel: "import",
        source: "import:bench",
        metadata: { causedBy: "process:bench" },
      });
      if (received.status !== "stored") throw new Error(`an input was ${received.status}`);
    }
  };
  await Promise.all(Array.from({ length: window }, worker));
  return inputsPerRound / ((performance.now() - started) / 1000);
}

const database = await createTestDatabase("dl_bench_privacy");
const env = { DATABASE_URL: database.url, MASTER_KEY: randomBytes(32).toString("base64") };
const runtime = await openRuntime(env);
try {
  const meta = { causedBy: "process:bench" };
  const { tenantId } = await createTenant(runtime.store, { name: "bench", region: "global" }, meta);
  await addDomain(runtime.store, { tenantId, domain }, meta);
  const { catchUp } = await import("@dmarc-ledger/projection-engine");
  const { tenancyProjections } = await import("@dmarc-ledger/tenancy");
  await catchUp({ store: runtime.store, db: runtime.db, projections: tenancyProjections });
  const dataKeys = await runtimeDataKeys(runtime, env);
  const clear: IntakeDeps = { store: runtime.store, db: runtime.db, parseThreads: 0 };
  const sealed: IntakeDeps = { ...clear, dataKeys };
  log(
    `receiveInput on PostgreSQL, ${inputsPerRound} inputs a round, ${window} in flight, ${rounds} rounds each way, alternating; parsed on the calling thread`,
  );
  for (const set of sets) {
    // One round each way first, unmeasured: connections, JIT, the month's key.
    await round(clear, set.next);
    await round(sealed, set.next);
    const off: number[] = [];
    const on: number[] = [];
    for (let r = 0; r < rounds; r++) {
      off.push(await round(clear, set.next));
      on.push(await round(sealed, set.next));
      progress(`${set.name}: round ${r + 1}: ${off.at(-1)!.toFixed(0)} / ${on.at(-1)!.toFixed(0)} inputs/s`);
    }
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    const ratio = mean(on) / mean(off);
    log(
      `${set.name}: in clear ${mean(off).toFixed(0)} inputs/s, sealed ${mean(on).toFixed(0)} inputs/s: ${(ratio * 100).toFixed(1)}% (target >= ${target * 100}%) ${ratio >= target ? "PASS" : "FAIL"}`,
    );
  }
} finally {
  await runtime.close();
  await database.drop();
}
