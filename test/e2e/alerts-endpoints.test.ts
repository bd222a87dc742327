import { hostname } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Backend,
  cli,
  postgresBackend,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";

interface Listed<T> {
  status: string;
  total: number;
  records: T[];
}

/**
 * What a webhook endpoint may be, as the running service checks it when it is added
 * (docs/alerts.md, "Which endpoints are refused"): names of this machine, IPv6 forms that carry an
 * IPv4 address and names that resolve to none or to a private one, each refused with a message
 * that names no address; the endpoints per tenant and the URL's length capped; the listing paged.
 */
describe("webhook endpoints checked when added, capped and paged", () => {
  let backend: Backend;
  let handle: ServiceHandle;
  let key: string;
  const add = (url: string) => handle.put("add_webhook", key, { url });

  beforeAll(async () => {
    backend = await postgresBackend();
    key = JSON.parse((await cli(backend.env, "tenant", "create", "hooks", "--json")).out).apiKey;
    handle = await startTestService({
      ...backend.env,
      WEBHOOK_ALLOW_PRIVATE_ADDRESSES: "no",
      WEBHOOK_MAX_ENDPOINTS: "3",
      WEBHOOK_MAX_URL_LENGTH: "200",
    });
  });

  afterAll(async () => {
    await handle?.stop();
    await backend?.cleanup();
  });

  it("refuses this machine's names and every private or IPv4-embedding address, naming none", async () => {
    const machine = hostname();
    const refused = [
      "http://localhost:8080/hook",
      "http://LOCALHOST/hook",
      "http://localhost./hook",
      "http://foo.localhost/hook",
      "http://printer.local/hook",
      `http://${machine}/hook`,
      `http://${machine.toUpperCase()}./hook`,
      "http://127.0.0.1/hook",
      "http://[::1]/hook",
      "http://[::127.0.0.1]/hook",
      "http://[::ffff:127.0.0.1]/hook",
      "http://[::ffff:0:7f00:1]/hook",
      "http://[64:ff9b::127.0.0.1]/hook",
      "http://[64:ff9b::8.8.8.8]/hook",
      "http://[2002:7f00:1::1]/hook",
      "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook",
      "http://10.0.0.1/hook",
      "http://169.254.169.254/latest/meta-data",
      // Never resolves (RFC 6761).
      "https://hooks.no-such-name.invalid/hook",
    ];
    for (const url of refused) {
      const answer = await add(url);
      expect(answer.status, url).toBe(400);
      const body = JSON.stringify(answer.json);
      expect(body, url).toMatch(/invalid_webhook/);
      // No address and no name of ours in the message.
      expect(body, url).not.toMatch(/127\.|7f00|::1|10\.0\.0\.1|169\.254|8\.8\.8\.8|ff9b|2002:|localhost/i);
      expect(body.toLowerCase(), url).not.toContain(machine.toLowerCase());
    }
    expect(((await handle.get("webhooks", key)).json as Listed<unknown>).total).toBe(0);
  });

  it("caps the URL's length and the endpoints per tenant", async () => {
    const long = `https://8.8.8.8/${"a".repeat(200)}`;
    const tooLong = await add(long);
    expect(tooLong.status).toBe(400);
    expect(JSON.stringify(tooLong.json)).toMatch(/at most 200 characters/);
    expect(JSON.stringify(tooLong.json)).not.toContain("aaaaaaaaaa");
    for (const n of [1, 2, 3]) expect((await add(`https://8.8.8.8/hook-${n}`)).status).toBe(200);
    const fourth = await add("https://8.8.4.4/hook-4");
    expect(fourth.status).toBe(400);
    expect(JSON.stringify(fourth.json)).toMatch(/WEBHOOK_MAX_ENDPOINTS/);
  });

  it("pages the listing as the other lists do", async () => {
    const first = (await handle.get("webhooks?per_page=2", key)).json as Listed<{ url: string }>;
    const second = (await handle.get("webhooks?per_page=2&page=2", key)).json as Listed<{ url: string }>;
    expect(first.total).toBe(3);
    expect(second.total).toBe(3);
    expect([...first.records, ...second.records].map((record) => record.url)).toEqual([
      "https://8.8.8.8/hook-1",
      "https://8.8.8.8/hook-2",
      "https://8.8.8.8/hook-3",
    ]);
    expect((await handle.get("webhooks?per_page=0", key)).status).toBe(400);
  });

  it("refuses a WEBHOOK_MAX_ENDPOINTS that is not a number from 1 to 1000, naming it", async () => {
    const started = await startTestService({ ...backend.env, WEBHOOK_MAX_ENDPOINTS: "0" }).then(
      async (other) => {
        await other.stop();
        return null;
      },
      (error: unknown) => error as Error,
    );
    expect(started?.message).toMatch(/WEBHOOK_MAX_ENDPOINTS/);
  });
});
