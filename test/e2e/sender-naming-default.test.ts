/**
 * Who sends, on a default start with no DNS reachable (the machine's resolver answers nothing):
 * parsedmarc's sample aggregate reports imported, the sources named from the shipped databases
 * and the reports alone. The share of messages whose sender a service or an AS organisation
 * names is read from the API.
 */
import { createSocket, type Socket } from "node:dgram";
import { streams } from "@dmarc-ledger/events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateCorpus } from "../support/corpus.js";
import {
  type Backend,
  cli,
  postgresBackend,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";
import { waitForEverySourceNamed } from "../support/sources-named.js";
import { eventually } from "../support/webhook-receiver.js";

interface SenderRecord {
  Domain: string;
  Service: string;
  SenderKind: string;
  NamedBy: string | null;
  ASN: string;
  ASNOrganization: string;
  Country: string;
  Volume: string;
}

interface SourceRecord {
  SourceIp: string;
  Country: string;
  ASN: string;
}

describe("naming senders on a default start with no DNS", () => {
  let backend: Backend;
  let handle: ServiceHandle;
  let apiKey: string;
  const senders: SenderRecord[] = [];
  const sources: SourceRecord[] = [];

  beforeAll(async () => {
    backend = await postgresBackend();
    apiKey = JSON.parse((await cli(backend.env, "tenant", "create", "acme", "--json")).out).apiKey;
    const imported = await cli(backend.env, "import", aggregateCorpus);
    expect([0, 2], imported.err).toContain(imported.code);
    // No DNS setting: what `start` does on a machine whose resolver does not answer.
    const env = { ...backend.env };
    delete env.DNS_NAMESERVERS;
    delete env.SOURCE_IP_RESOLVER;
    handle = await startTestService(env);
    const { db } = handle.runtime;
    const domains = await db.selectFrom("report_domain").select("domain").distinct().execute();
    for (const { domain } of domains) await handle.put("add_domain", apiKey, { domain });
    // Every source named at first sight, before and whatever DNS answers.
    await waitForEverySourceNamed(handle.runtime);
    for (let page = 1; ; page++) {
      const got = (await handle.get(`aggregate_by_sender?start=0&per_page=1000&page=${page}`, apiKey))
        .json as {
        records: SenderRecord[];
      };
      senders.push(...got.records);
      if (got.records.length < 1000) break;
    }
    for (let page = 1; ; page++) {
      const got = (await handle.get(`aggregate_by_source?start=0&per_page=1000&page=${page}`, apiKey))
        .json as {
        records: SourceRecord[];
      };
      sources.push(...got.records);
      if (got.records.length < 1000) break;
    }
  });

  afterAll(async () => {
    await handle?.stop();
    await backend?.cleanup();
  });

  it("names the senders of at least half of all messages by a service or an AS organisation", () => {
    const volume = (records: SenderRecord[]) => records.reduce((sum, r) => sum + Number(r.Volume), 0);
    const named = senders.filter((r) => r.SenderKind === "service" || r.SenderKind === "asn");
    const share = volume(named) / volume(senders);
    expect(senders.length).toBeGreaterThan(1);
    expect(share, `named share ${share.toFixed(4)}`).toBeGreaterThanOrEqual(0.5);
  });

  it("shows no bare AS number as a sender, and says what named each", () => {
    for (const record of senders) {
      expect(record.Service, JSON.stringify(record)).not.toMatch(/^AS\d+$/);
      if (record.SenderKind === "asn") {
        expect(record).toMatchObject({ NamedBy: "asn", Service: record.ASNOrganization });
        expect(record.ASN).toMatch(/^\d+$/);
      }
      if (record.SenderKind === "unknown") expect(record.NamedBy).toBeNull();
      if (record.SenderKind === "service") expect(["rdns", "auth_domain", "asn"]).toContain(record.NamedBy);
    }
    // Without DNS, a service is named by the reports' authentication domains or its AS.
    expect(new Set(senders.filter((r) => r.SenderKind === "service").map((r) => r.NamedBy))).not.toContain(
      "rdns",
    );
  });

  it("gives private and documentation addresses no AS or country", async () => {
    const special = sources.filter((s) =>
      /^(10\.|192\.168\.|127\.|192\.0\.2\.|198\.51\.100\.|203\.0\.113\.)/.test(s.SourceIp),
    );
    expect(special.length).toBeGreaterThan(0);
    for (const source of special) expect(source, source.SourceIp).toMatchObject({ Country: "", ASN: "" });
    const rows = await handle.runtime.db
      .selectFrom("source_ip_name")
      .select(["source_ip", "address_range"])
      .where("source_ip", "in", special.length ? special.map((s) => s.SourceIp) : [""])
      .execute();
    for (const row of rows) expect(row.address_range, row.source_ip).not.toBeNull();
    // The public ones are placed.
    expect(sources.filter((s) => s.Country !== "").length).toBeGreaterThan(sources.length / 2);
    // Each source's first naming came without DNS.
    const [first] = await handle.runtime.store.readStream(streams.sourceIp(sources[0]!.SourceIp));
    expect(first?.data).toMatchObject({ outcome: "not_asked" });
  });
});

describe("naming senders when the resolvers do not answer", () => {
  let backend: Backend;
  let handle: ServiceHandle;
  let silent: Socket;
  let apiKey: string;
  const origin = () => new URL(handle.service.apiRoot).origin;

  beforeAll(async () => {
    // A resolver that takes every query and answers none.
    silent = createSocket("udp4");
    await new Promise<void>((resolve) => silent.bind(0, "127.0.0.1", resolve));
    backend = await postgresBackend();
    apiKey = JSON.parse((await cli(backend.env, "tenant", "create", "acme", "--json")).out).apiKey;
    const imported = await cli(
      backend.env,
      "import",
      `${aggregateCorpus}addisonfoods.com!example.com!1536105600!1536191999.xml`,
    );
    expect(imported.code, imported.err).toBe(0);
    handle = await startTestService({
      ...backend.env,
      DNS_NAMESERVERS: `127.0.0.1:${silent.address().port}`,
      DNS_TIMEOUT_MS: "50",
    });
    expect(handle.service.reverseDns).toEqual({
      enabled: true,
      nameservers: [`127.0.0.1:${silent.address().port}`],
    });
    await handle.put("add_domain", apiKey, { domain: "example.com" });
  });

  afterAll(async () => {
    await handle?.stop();
    await backend?.cleanup();
    silent?.close();
  });

  it("says so in /readyz and /metrics, and keeps the sources' other names", async () => {
    let readyz: { status: string; reverseDns?: { status: string; failed: number } } = { status: "" };
    await eventually(
      async () => {
        readyz = (await (await fetch(new URL("/readyz", origin()))).json()) as typeof readyz;
        return readyz.reverseDns?.status === "not_answering";
      },
      "a failed lookup",
      60_000,
    );
    expect(readyz).toMatchObject({ status: "ready", reverseDns: { status: "not_answering", answered: 0 } });
    expect(readyz.reverseDns!.failed).toBeGreaterThan(0);
    const metrics = await (await fetch(new URL("/metrics", origin()))).text();
    expect(metrics).toMatch(/source_ip_names\{outcome="timeout"\} [1-9]/);
    expect(metrics).toMatch(/source_ip_reverse_dns_lookups_last_hour\{result="failed"\} [1-9]/);
    const got = (await handle.get("aggregate_by_sender?start=0", apiKey)).json as { records: SenderRecord[] };
    expect(got.records.length).toBeGreaterThan(0);
    for (const record of got.records) expect(record.SenderKind, record.Service).not.toBe("unknown");
  });
});
