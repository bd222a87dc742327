import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateReportXml } from "../support/report-xml.js";
import {
  type Backend,
  cli,
  postgresBackend,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";

// Issue 21, point 5: list answers are kept while the read models are unchanged. Kept answers
// must never be stale after a write, nor one tenant's for another.

const begin = Date.UTC(2025, 5, 1) / 1000;

describe("the API's kept list answers", () => {
  let backend: Backend;
  let handle: ServiceHandle;
  const keys: Record<string, string> = {};

  const upload = async (tenant: string, id: string, domain: string, count: number) => {
    const answer = await fetch(`${handle.service.apiRoot}reports`, {
      method: "POST",
      headers: { Authorization: `Bearer ${keys[tenant]}`, "Content-Type": "application/xml" },
      body: aggregateReportXml({
        reportId: id,
        domain,
        organization: "receiver.example",
        begin,
        end: begin + 86_399,
        rows: [{ sourceIp: "192.0.2.7", count }],
      }),
    });
    expect(answer.status).toBe(202);
  };
  const hits = async () => {
    const text = await (await fetch(new URL("/metrics", handle.service.apiRoot))).text();
    return Number(/^api_answer_cache_requests_total\{outcome="hit"\} (\d+)$/m.exec(text)?.[1] ?? 0);
  };
  const volume = async (tenant: string, query: string) => {
    const answer = await handle.get(`aggregate_by_domain?${query}`, keys[tenant]!);
    expect(answer.status).toBe(200);
    return (answer.json as { records: { Domain: string; Volume: string }[] }).records;
  };

  beforeAll(async () => {
    backend = await postgresBackend();
    for (const name of ["a", "b"]) {
      const created = await cli(backend.env, "tenant", "create", name, "--json");
      keys[name] = (JSON.parse(created.out) as { apiKey: string }).apiKey;
    }
    handle = await startTestService(backend.env);
    expect((await handle.put("add-domain", keys.a!, { domain: "cache-a.com" })).status).toBe(200);
    expect((await handle.put("add-domain", keys.b!, { domain: "cache-b.com" })).status).toBe(200);
    await upload("a", "a-1", "cache-a.com", 5);
    await upload("b", "b-1", "cache-b.com", 9);
  });

  afterAll(async () => {
    await handle?.stop();
    await backend?.cleanup();
  });

  it("answers a question asked again from what it kept, and the same way", async () => {
    const first = await handle.get("aggregate_by_domain?start=0", keys.a!);
    const before = await hits();
    const again = await handle.get("aggregate_by_domain?start=0", keys.a!);
    expect(again.body).toBe(first.body);
    expect(again.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await hits()).toBe(before + 1);
    // A period ending at the newest fact or past it is the same question.
    const end = begin + 86_399;
    expect((await handle.get(`aggregate_by_domain?start=0&end=${end + 1000}`, keys.a!)).body).toBe(
      first.body,
    );
    expect(await hits()).toBe(before + 2);
  });

  it("never answers one tenant with what it kept for another", async () => {
    expect(await volume("a", "start=0")).toEqual([
      expect.objectContaining({ Domain: "cache-a.com", Volume: "5" }),
    ]);
    expect(await volume("b", "start=0")).toEqual([
      expect.objectContaining({ Domain: "cache-b.com", Volume: "9" }),
    ]);
  });

  it("answers afresh after a write: the writer reads what it wrote", async () => {
    expect(await volume("a", "start=0")).toEqual([expect.objectContaining({ Volume: "5" })]);
    await upload("a", "a-2", "cache-a.com", 3);
    expect(await volume("a", "start=0")).toEqual([expect.objectContaining({ Volume: "8" })]);
    // And so does everyone else: the kept answers of the other tenant were made before the write too.
    expect(await volume("b", "start=0")).toEqual([expect.objectContaining({ Volume: "9" })]);
  });
});
