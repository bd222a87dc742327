/**
 * An approved sender whose group gains addresses says so (issue 41, point 5): the corpus's large
 * example.com report split by address into two reports, the first imported and a sender of it
 * approved, then the second, which brings the sender addresses nobody approved. GET
 * sender_approvals answers the addresses at approval, now, and those added, computed again from
 * the two files with the service's names; approving again records them; a replay keeps them.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeEvent, type SenderApprovalSet, streams } from "@dmarc-ledger/events";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateCorpus } from "../support/corpus.js";
import { readSimpleRows } from "../support/independent-aggregate.js";
import {
  type Backend,
  backends,
  cli,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";
import { type ServiceNaming, serviceNamings } from "../support/service-namings.js";
import { waitForEverySourceNamed } from "../support/sources-named.js";

const reportFile = `${aggregateCorpus}!large-example.com!1711897200!1711983600.xml`;
const period = "start=0&end=2000000000";

interface ApprovalRecord {
  Domain: string;
  Kind: string;
  Sender: string;
  Approved: boolean;
  AddressesAtApproval: number | null;
  AddressesNow: number | null;
  AddedCount: number | null;
  AddedSinceApproval: string[] | null;
}

/**
 * The report as two: the records of every other address (in the file's order) in each, under
 * report ids of their own, so that the second brings addresses the first never showed.
 */
function splitByAddress(dir: string): [string, string] {
  const text = readFileSync(reportFile, "utf8");
  const records = text.match(/<record>[\s\S]*?<\/record>/g) ?? [];
  const head = text.slice(0, text.indexOf("<record>"));
  const order = [...new Set(records.map((record) => /<source_ip>([^<]+)<\/source_ip>/.exec(record)![1]!))];
  const half = new Map(order.map((ip, index) => [ip, index % 2]));
  return [0, 1].map((part) => {
    const file = join(dir, `part-${part}.xml`);
    const mine = records.filter(
      (record) => half.get(/<source_ip>([^<]+)<\/source_ip>/.exec(record)![1]!) === part,
    );
    writeFileSync(
      file,
      `${head.replace("<report_id>example.com:1711897200</report_id>", `<report_id>example.com:1711897200:${part}</report_id>`)}${mine.join("\n")}\n</feedback>\n`,
    );
    return file;
  }) as [string, string];
}

describe.each(backends)("an approval whose group gains addresses, on %s", (_name, makeBackend) => {
  let backend: Backend;
  let handle: ServiceHandle;
  let apiKey: string;
  let first: string;
  let second: string;
  let sender: string;
  let atApproval: string[];
  const tmp = mkdtempSync(join(tmpdir(), "dl-approval-members-"));

  /** The addresses of the files that the service's names put in `sender`, sorted bytewise. */
  const addressesOf = (names: Map<string, ServiceNaming>, ...files: string[]) =>
    [...new Set(files.flatMap((file) => readSimpleRows(file).map((row) => row.sourceIp)))]
      .filter((ip) => (names.get(ip)?.sender.sender ?? "unknown") === sender)
      .sort();
  const decision = async () => {
    const answer = await handle.get(`sender_approvals?${period}&domain=example.com`, apiKey);
    expect(answer.status, answer.body).toBe(200);
    const { records } = answer.json as { records: ApprovalRecord[] };
    return records.find((record) => record.Kind === "service" && record.Sender === sender);
  };
  const approve = async () =>
    (
      await handle.put("sender_approval", apiKey, {
        domain: "example.com",
        service: sender,
        approved: "true",
      })
    ).status;
  const decisions = async () =>
    (await handle.runtime.store.readStream(streams.domain("example.com")))
      .map(decodeEvent)
      .filter((event) => event?.type === "SenderApprovalSet")
      .map((event) => event!.data as SenderApprovalSet);

  beforeAll(async () => {
    backend = await makeBackend();
    [first, second] = splitByAddress(tmp);
    apiKey = JSON.parse((await cli(backend.env, "tenant", "create", "acme", "--json")).out).apiKey;
    handle = await startTestService({ ...backend.env, SOURCE_IP_RESOLVER: "off" });
    expect((await handle.put("add_domain", apiKey, { domain: "example.com" })).status).toBe(200);
    const imported = await cli(backend.env, "import", first);
    expect(imported.code, imported.err).toBe(0);
    await waitForEverySourceNamed(handle.runtime);
  }, 240_000);

  afterAll(async () => {
    await handle?.stop();
    await backend?.cleanup();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("records the sender's addresses when approved, and nothing added yet", async () => {
    const names = await serviceNamings(handle.runtime.db);
    // The named sender with the most addresses in the first report.
    const counts = new Map<string, number>();
    for (const ip of new Set(readSimpleRows(first).map((row) => row.sourceIp))) {
      const name = names.get(ip)?.sender.sender ?? "unknown";
      if (name !== "unknown") counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    sender = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]![0];
    atApproval = addressesOf(names, first);
    expect(atApproval.length).toBeGreaterThan(1);

    expect(await decision()).toBeUndefined();
    expect(await approve()).toBe(200);
    expect((await decisions()).map((d) => d.members)).toEqual([
      { addresses: atApproval, count: atApproval.length },
    ]);
    expect(await decision()).toEqual({
      Domain: "example.com",
      Kind: "service",
      Sender: sender,
      Approved: true,
      AddressesAtApproval: atApproval.length,
      AddressesNow: atApproval.length,
      AddedCount: 0,
      AddedSinceApproval: [],
    });
    // A range decision is listed beside it, with nothing recorded.
    const range = await handle.put("sender_approval", apiKey, {
      domain: "example.com",
      range: "192.0.2.0/24",
      approved: "false",
    });
    expect(range.status).toBe(200);
    const all = (await handle.get(`sender_approvals?${period}`, apiKey)).json as {
      records: ApprovalRecord[];
    };
    expect(
      all.records.map((r) => [r.Kind, r.Sender, r.Approved, r.AddressesAtApproval, r.AddedCount]),
    ).toEqual([
      ["range", "192.0.2.0/24", false, null, null],
      ["service", sender, true, atApproval.length, 0],
    ]);
  });

  it("lists the addresses the second report added to the approved sender", async () => {
    const imported = await cli(backend.env, "import", second);
    expect(imported.code, imported.err).toBe(0);
    await waitForEverySourceNamed(handle.runtime);
    const names = await serviceNamings(handle.runtime.db);
    const now = addressesOf(names, first, second);
    const added = now.filter((ip) => !atApproval.includes(ip));
    expect(added.length).toBeGreaterThan(0);
    expect(await decision()).toEqual({
      Domain: "example.com",
      Kind: "service",
      Sender: sender,
      Approved: true,
      AddressesAtApproval: atApproval.length,
      AddressesNow: now.length,
      AddedCount: added.length,
      AddedSinceApproval: added.slice(0, 1000),
    });
    // The answer as the OpenAPI document describes it.
    const doc = (await handle.get("openapi.json", apiKey)).json as {
      paths: Record<
        string,
        { get: { responses: { "200": { content: Record<string, { schema: object }> } } } }
      >;
      components: { schemas: Record<string, object> };
    };
    const ajv = new Ajv2020({ strict: false });
    for (const [name, schema] of Object.entries(doc.components.schemas))
      ajv.addSchema(schema, `#/components/schemas/${name}`);
    const validate = ajv.compile(
      doc.paths["/sender_approvals"]!.get.responses["200"].content["application/json"]!.schema,
    );
    const listed = (await handle.get(`sender_approvals?${period}`, apiKey)).json;
    expect(validate(listed), JSON.stringify(validate.errors)).toBe(true);
    // The sender's addresses as aggregate_by_sender counts them: the same group.
    const senders = (
      await handle.get(`aggregate_by_sender?${period}&domain=example.com&per_page=1000`, apiKey)
    ).json as { records: { Service: string; SourceIPs: string }[] };
    expect(senders.records.find((r) => r.Service === sender)?.SourceIPs).toBe(String(now.length));
    // A period that holds none of the reports: nothing now, so nothing added.
    const before = (await handle.get("sender_approvals?start=0&end=1000000000&domain=example.com", apiKey))
      .json as { records: ApprovalRecord[] };
    expect(before.records.find((r) => r.Sender === sender)).toMatchObject({
      AddressesAtApproval: atApproval.length,
      AddressesNow: 0,
      AddedCount: 0,
    });
  });

  it("records them when approved again, once, and keeps them through a replay", async () => {
    const names = await serviceNamings(handle.runtime.db);
    const now = addressesOf(names, first, second);
    expect(await approve()).toBe(200);
    expect(await approve()).toBe(200);
    expect((await decisions()).filter((d) => d.service === sender).map((d) => d.members?.count)).toEqual([
      atApproval.length,
      now.length,
    ]);
    const current = {
      Domain: "example.com",
      Kind: "service",
      Sender: sender,
      Approved: true,
      AddressesAtApproval: now.length,
      AddressesNow: now.length,
      AddedCount: 0,
      AddedSinceApproval: [],
    };
    expect(await decision()).toEqual(current);
    const replayed = await cli(backend.env, "replay");
    expect(replayed.code, replayed.err).toBe(0);
    expect(await decision()).toEqual(current);
  });
});
