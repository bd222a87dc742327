import { type FixtureDnsServer, startFixtureDnsServer } from "@dmarc-ledger/safe-spf/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Backend,
  cli,
  pgliteBackend,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";

interface SafeSpfBody {
  safe_spf: {
    status: string;
    records: { name: string; value: string }[];
    last_computed: string | null;
    last_checked: string | null;
    next_check: string | null;
    refresh_state: string | null;
    refresh: string | null;
  } | null;
}
interface HistoryBody {
  records: { Event: string; CausedBy: string; Description: string }[];
}

const ttl = 2;
const provider = (txt: string) => ({ "_spf.mover.test": [{ TXT: txt, ttl }] });

/** `dmarc-ledger start` on its embedded default (PGlite) keeps Safe SPF records current. */
describe("Safe SPF kept current by the service, over HTTP and the command line", () => {
  let dns: FixtureDnsServer;
  let backend: Backend;
  let handle: ServiceHandle | undefined;
  let key: string;

  const state = async () =>
    ((await handle!.get("safe_spf?domain=example.com", key)).json as SafeSpfBody).safe_spf!;
  const history = async () =>
    ((await handle!.get("history?domain=example.com", key)).json as HistoryBody).records;
  async function until<T>(what: string, check: () => Promise<T | false>): Promise<T> {
    for (let attempt = 0; attempt < 400; attempt++) {
      const value = await check();
      if (value !== false) return value;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  beforeAll(async () => {
    dns = await startFixtureDnsServer(provider("v=spf1 ip4:192.0.2.0/24 ~all"));
    backend = await pgliteBackend();
    key = JSON.parse((await cli(backend.env, "tenant", "create", "acme", "--json")).out).apiKey;
    handle = await startTestService({
      ...backend.env,
      DNS_NAMESERVERS: dns.address,
      DNS_TIMEOUT_MS: "300",
      SAFE_SPF_MIN_REFRESH: "1s",
      SAFE_SPF_MAX_REFRESH: "1m",
    });
    expect((await handle.put("add-domain", key, { domain: "example.com" })).status).toBe(200);
    const original = "v=spf1 include:_spf.mover.test -all";
    expect((await handle.put("update_safe_spf", key, { domain: "example.com", original })).status).toBe(200);
  });

  afterAll(async () => {
    await handle?.stop();
    await backend?.cleanup();
    await dns?.close();
  });

  it("checks an unchanged record again without an event, and shows when", async () => {
    const checked = await until("a check after the computation", async () => {
      const current = await state();
      return current.status === "computed" && current.last_checked! > current.last_computed!
        ? current
        : false;
    });
    expect(checked.refresh_state).toBe("current");
    expect(checked.refresh).toBe("current");
    expect(checked.next_check! >= checked.last_checked!).toBe(true);
    expect((await history()).map((record) => record.Event)).toEqual([
      "DomainAdded",
      "SpfOriginalUpdated",
      "SafeSpfRecordComputed",
    ]);
  });

  it("follows a provider's change and tells the diff in the history", async () => {
    dns.setZones(provider("v=spf1 ip4:198.51.100.0/24 ~all"));
    await until("the new record", async () => {
      const current = await state();
      return current.records[0]!.value.includes("198.51.100.0/24") ? current : false;
    });
    const changed = (await history()).at(-1)!;
    expect(changed.Event).toBe("SafeSpfRecordComputed");
    expect(changed.CausedBy).toBe("process:safe-spf-refresh");
    expect(changed.Description).toContain("added 198.51.100.0/24; removed 192.0.2.0/24");
  });

  it("keeps the record through a SERVFAIL, shows it failing, and tells the failure once", async () => {
    const good = (await state()).records;
    dns.setZones({ "_spf.mover.test": ["SERVFAIL"] });
    const failing = await until("the failing state", async () => {
      const current = await state();
      return current.refresh_state === "failing" ? current : false;
    });
    expect(failing.refresh).toMatch(/^failing: unflattenable: DNS servfail for _spf\.mover\.test/);
    expect(failing.records).toEqual(good);
    // More retries (backoff from 1 s) happen meanwhile; none of them is news.
    await new Promise((resolve) => setTimeout(resolve, 3500));
    const failures = (await history()).filter((record) => record.Event === "SafeSpfComputationFailed");
    expect(failures).toHaveLength(1);
    expect(failures[0]!.Description).toContain("the last good record is still served");
    expect((await state()).records).toEqual(good);
  });

  it("prints the same trail from the command line", async () => {
    await handle!.stop();
    handle = undefined;
    const printed = await cli(backend.env, "history", "example.com");
    expect(printed.code, printed.err).toBe(0);
    const lines = printed.out.split("\n");
    expect(lines).toHaveLength(5);
    expect(lines[3]).toContain("by process:safe-spf-refresh: Safe SPF computed: 1 records");
    expect(lines[3]).toContain("changed: added 198.51.100.0/24; removed 192.0.2.0/24");
    expect(lines[4]).toContain("Safe SPF failed (unflattenable)");
  });
});
