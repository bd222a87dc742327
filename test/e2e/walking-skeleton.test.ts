import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { catchUp, resetProjections } from "@dmarc-ledger/projection-engine";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { createTenant } from "@dmarc-ledger/tenancy";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtEntry } from "../support/built-processes.js";
import {
  type Backend,
  backends,
  cli,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";
import { walkingSkeletonExpected, walkingSkeletonSamples } from "../support/walking-skeleton-samples.js";

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

// The three parsedmarc samples the issue names, and what the API says of them (test/support).
const samples = Object.values(walkingSkeletonSamples);
const expectedAll = walkingSkeletonExpected;

describe.each(backends)("walking skeleton on %s", (_name, makeBackend) => {
  let backend: Backend;
  let apiKey: string;
  let handle: ServiceHandle;

  beforeAll(async () => {
    backend = await makeBackend();
    // The real command line, as a script would run it.
    const created = spawnSync(
      process.execPath,
      [...(await builtEntry("apps/cli/dist/main.js")), "tenant", "create", "acme", "--json"],
      {
        cwd: repoRoot,
        env: { ...process.env, ...backend.env },
        encoding: "utf8",
      },
    );
    expect(created.status, created.stderr).toBe(0);
    const parsed = JSON.parse(created.stdout) as { tenantId: string; apiKey: string };
    expect(parsed.tenantId).toMatch(/^[0-9a-f-]{36}$/);
    apiKey = parsed.apiKey;

    const imported = await cli(backend.env, "import", ...samples);
    expect(imported.code, imported.err).toBe(0);
    expect(imported.out).toContain("3 reports stored, 0 duplicates, 0 inputs rejected");

    handle = await startTestService(backend.env);
  });

  afterAll(async () => {
    await handle?.stop();
    await backend?.cleanup();
  });

  it("links every endpoint from the root", async () => {
    const root = await handle.get("", apiKey);
    expect(root.status).toBe(200);
    expect(root.json).toMatchObject({ status: "SUCCESS", region: "global" });
    const links = (root.json as { links: Record<string, string> }).links;
    expect(links.aggregate_by_domain).toBe(new URL("aggregate_by_domain", handle.service.apiRoot).toString());
  });

  it("counts nothing before the domain is the tenant's, everything after", async () => {
    const before = await handle.get("aggregate_by_domain?start=0&end=2000000000", apiKey);
    expect(before.json).toEqual({ status: "SUCCESS", total: 0, records: [] });

    const added = await handle.put("add-domain", apiKey, { domain: "Example.COM" });
    expect(added).toEqual({ status: 200, json: { status: "SUCCESS", added: true } });

    // Read-your-writes: the very next read sees the domain and its earlier reports.
    const after = await handle.get("aggregate_by_domain?start=0&end=2000000000", apiKey);
    expect(after.status).toBe(200);
    expect(after.json).toEqual({ status: "SUCCESS", total: 1, records: [expectedAll] });
    // The spec's types: counters are strings, total an integer.
    expect(after.body).toContain('"total":1,');
  });

  it("treats both period bounds as inclusive, to the second", async () => {
    const fromVeeam = await handle.get("aggregate_by_domain?start=1530133200&end=1536105600", apiKey);
    expect(fromVeeam.json).toMatchObject({ total: 1, records: [{ Volume: "2", DKIM: "1", SPFFailed: "2" }] });
    const afterVeeam = await handle.get("aggregate_by_domain?start=1530133201&end=1536105600", apiKey);
    expect(afterVeeam.json).toMatchObject({ records: [{ Volume: "1", DKIM: "1" }] });
    const beforeAddison = await handle.get("aggregate_by_domain?start=1530133200&end=1536105599", apiKey);
    expect(beforeAddison.json).toMatchObject({ records: [{ Volume: "1", DKIM: "0" }] });
    const pastTheEnd = await handle.get("aggregate_by_domain?start=0&end=2000000000&page=2", apiKey);
    expect(pastTheEnd.json).toEqual({ status: "SUCCESS", total: 1, records: [] });
  });

  it("answers bad parameters and keys with the contract's errors", async () => {
    const bad = await handle.get("aggregate_by_domain?start=10&end=5", apiKey);
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ status: "ERROR", code: "invalid_parameter" });
    expect((bad.json as { message: string }).message).toContain("start");
    const unknownParameter = await handle.get("aggregate_by_domain?colour=x", apiKey);
    expect(unknownParameter.status).toBe(400);
    // The domain filter names one of the caller's domains, or it is 404 as anywhere else.
    const notTheirs = await handle.get("aggregate_by_domain?domain=x", apiKey);
    expect(notTheirs.status).toBe(404);
    expect(notTheirs.json).toMatchObject({ code: "unknown_domain" });
    const unknownKey = await handle.get("aggregate_by_domain", `${apiKey.slice(0, -4)}AAAA`);
    expect(unknownKey.status).toBe(401);
    expect(unknownKey.headers.get("www-authenticate")).toMatch(/^Bearer/);
    const otherRegion = await handle.get("aggregate_by_domain", apiKey.replace("dlk_global_", "dlk_eu_"));
    expect(otherRegion.status).toBe(421);
    expect(unknownKey.headers.get("x-request-id")).toBeTruthy();
  });

  it("never shows one tenant another tenant's data", async () => {
    const other = await createTenant(
      handle.runtime.store,
      { name: "other", region: "global" },
      { causedBy: "test" },
    );
    let response = await handle.get("aggregate_by_domain?start=0&end=2000000000", other.apiKey);
    for (let attempt = 0; response.status === 401 && attempt < 100; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      response = await handle.get("aggregate_by_domain?start=0&end=2000000000", other.apiKey);
    }
    expect(response.json).toEqual({ status: "SUCCESS", total: 0, records: [] });
    const taken = await handle.put("add-domain", other.apiKey, { domain: "example.com" });
    expect(taken.status).toBe(409);
  });

  it("gives the same answer after the read models are dropped and replayed", async () => {
    const path = "aggregate_by_domain?start=0&end=2000000000";
    const before = (await handle.get(path, apiKey)).body;
    await handle.stop();
    const replayed = await cli(backend.env, "replay");
    expect(replayed.code, replayed.err).toBe(0);
    handle = await startTestService(backend.env);
    const after = (await handle.get(path, apiKey)).body;
    expect(after).toBe(before);
    expect(JSON.parse(after)).toMatchObject({ records: [expectedAll] });
    // And a replay in place, through the engine directly, too.
    await resetProjections(handle.runtime.db, allProjections);
    await catchUp({ store: handle.runtime.store, db: handle.runtime.db, projections: allProjections });
    expect((await handle.get(path, apiKey)).body).toBe(before);
  });
});
