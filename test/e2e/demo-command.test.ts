/**
 * `dmarc-ledger demo` beside a running embedded service (PGlite): the real command line, in its
 * own process, hands the command over the control socket; the service stores the generated
 * reports through its intake and names their sources from the shipped databases.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtEntry } from "../support/built-processes.js";
import {
  type Backend,
  cli,
  pgliteBackend,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";
import { waitForEverySourceNamed } from "../support/sources-named.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const days = 20;

interface SenderRecord {
  Domain: string;
  Service: string;
  SenderKind: string;
  NamedBy: string | null;
  Volume: string;
}

interface DateRecord {
  Date: string;
  DispositionNone: string;
  DispositionQuarantine: string;
}

async function cliProcess(env: NodeJS.ProcessEnv, ...argv: string[]): Promise<{ code: number; out: string }> {
  const entry = await builtEntry("apps/cli/dist/main.js");
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...entry, ...argv], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += String(chunk);
    });
    child.once("error", reject);
    child.once("close", (code) => resolve({ code: code ?? -1, out }));
  });
}

describe("dmarc-ledger demo beside a running service", () => {
  let backend: Backend;
  let handle: ServiceHandle;
  let printed: string;
  let created: { tenantId: string; apiKey: string };
  const senders: SenderRecord[] = [];

  beforeAll(async () => {
    backend = await pgliteBackend();
    // No reverse DNS: the sources are named from the shipped databases and the reports alone.
    handle = await startTestService({ ...backend.env, SOURCE_IP_RESOLVER: "off" });
    const demo = await cliProcess(backend.env, "demo", "--days", String(days), "--json");
    expect(demo.code).toBe(0);
    printed = demo.out.trim();
    created = JSON.parse(printed);
    await waitForEverySourceNamed(handle.runtime);
    const got = (await handle.get("aggregate_by_sender?start=0&per_page=1000", created.apiKey)).json as {
      records: SenderRecord[];
    };
    senders.push(...got.records);
  }, 600_000);

  afterAll(async () => {
    await handle?.stop();
    await backend?.cleanup();
  });

  it('prints {"tenantId","apiKey"} with --json, a key that reads the tenant', async () => {
    expect(Object.keys(created).sort()).toEqual(["apiKey", "tenantId"]);
    expect(created.tenantId).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.apiKey).toMatch(/^dlk_/);
    const domains = (await handle.get("domains", created.apiKey)).json as { records: { Domain: string }[] };
    expect(JSON.stringify(domains)).toContain("example.com");
  });

  it("shows the real services as senders, named for most messages", () => {
    const services = new Set(senders.map((r) => r.Service));
    for (const name of [
      "Google (Including Gmail and Google Workspace)",
      "Amazon SES",
      "Twilio SendGrid",
      "Intuit Mailchimp",
      "Outlook (Personal and Microsoft 365)",
    ])
      expect(services, name).toContain(name);
    const volume = (records: SenderRecord[]) => records.reduce((sum, r) => sum + Number(r.Volume), 0);
    const named = volume(senders.filter((r) => r.NamedBy !== null));
    expect(named / volume(senders)).toBeGreaterThan(0.9);
    expect(senders.find((r) => r.Service === "Amazon SES")?.NamedBy).toBe("auth_domain");
  });

  it("shows the move from p=none to p=quarantine in the daily series", async () => {
    const start = Math.floor(Date.now() / 86_400_000 - days) * 86_400;
    const got = (
      await handle.get(`aggregate_by_date?domain=example.com&start=${start}&per_page=1000`, created.apiKey)
    ).json as { records: DateRecord[] };
    const withMail = got.records.filter((r) => Number(r.DispositionNone) > 0);
    expect(withMail.length).toBe(days);
    const half = withMail.slice(0, Math.floor(days / 2));
    const after = withMail.slice(Math.floor(days / 2));
    expect(half.reduce((sum, r) => sum + Number(r.DispositionQuarantine), 0)).toBe(0);
    // The spoofing run falls after the move: its mail is quarantined.
    expect(after.reduce((sum, r) => sum + Number(r.DispositionQuarantine), 0)).toBeGreaterThan(0);
  });

  it("stores the failure reports", async () => {
    const got = (await handle.get("forensic?start=0", created.apiKey)).json as { total: string };
    expect(Number(got.total)).toBeGreaterThan(0);
  });

  it("runs again safely: the same tenant, a new key, every report a duplicate", async () => {
    const again = await cli(backend.env, "demo", "--days", String(days));
    expect(again.code, again.err).toBe(0);
    expect(again.out).toContain(`Tenant "demo" ${created.tenantId} reused`);
    expect(again.out).toMatch(/: 0 reports stored, \d+ duplicates, 0 inputs rejected/);
    const key = /API key \(shown once, keep it safe\): (\S+)/.exec(again.out)?.[1];
    expect(key).toBeDefined();
    expect(key).not.toBe(created.apiKey);
    expect((await handle.get("domains", key!)).status).toBe(200);
  });
});
