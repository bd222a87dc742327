import { randomBytes } from "node:crypto";
import { openRuntime } from "@dmarc-ledger/runtime";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateCorpus, failureCorpus } from "../support/corpus.js";
import {
  deleteStream,
  natsUrl,
  type StreamMessage,
  streamConfig,
  streamMessages,
} from "../support/nats-stream.js";
import {
  type Backend,
  backends,
  cli,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";

interface FeedEvent {
  id: string;
  type: string;
  cursor: string;
  data: Record<string, unknown>;
}

const reports = [
  `${aggregateCorpus}addisonfoods.com!example.com!1536105600!1536191999.xml`,
  `${aggregateCorpus}veeam.com!example.com!1530133200!1530219600.xml`,
  `${aggregateCorpus}ikea.com!example.de!1538690400!1538776800.xml`,
  `${failureCorpus}dmarc_ruf_report_linkedin.eml`,
];

describe.each(backends)("events published to NATS JetStream on %s", (_name, makeBackend) => {
  // Unique per run, so that runs side by side never share a stream or a subject.
  const tag = randomBytes(4).toString("hex");
  const stream = `DLT_FEED_${tag}`;
  const prefix = `dlt-${tag}`;
  let backend: Backend;
  let env: NodeJS.ProcessEnv;
  let handle: ServiceHandle | undefined;
  let acme: { tenantId: string; apiKey: string };
  let beta: { tenantId: string; apiKey: string };

  const wholeFeed = async (key: string): Promise<FeedEvent[]> => {
    const events: FeedEvent[] = [];
    let after = "";
    for (;;) {
      const page = (await handle!.get(`events?limit=1000${after && `&after=${after}`}`, key)).json as {
        events: FeedEvent[];
        next: string;
      };
      if (page.events.length === 0) return events;
      events.push(...page.events);
      after = page.next;
    }
  };
  /**
   * The stream's messages and both feeds, read when the stream holds every event the feeds show
   * (the publisher runs behind, and the background processes may append meanwhile).
   */
  const published = async () => {
    let seen: { messages: StreamMessage[]; feeds: Map<string, FeedEvent[]> } | null = null;
    await expect
      .poll(
        async () => {
          const messages = await streamMessages(stream);
          const feeds = new Map([
            [acme.tenantId, await wholeFeed(acme.apiKey)],
            [beta.tenantId, await wholeFeed(beta.apiKey)],
          ]);
          const fed = [...feeds.values()].reduce((sum, events) => sum + events.length, 0);
          if ((await streamMessages(stream)).length !== messages.length || messages.length !== fed)
            return false;
          seen = { messages, feeds };
          return true;
        },
        { timeout: 60_000 },
      )
      .toBe(true);
    return seen!;
  };

  beforeAll(async () => {
    backend = await makeBackend();
    env = {
      ...backend.env,
      EVENTS_NATS_URL: natsUrl,
      EVENTS_NATS_STREAM: stream,
      EVENTS_NATS_SUBJECT_PREFIX: prefix,
      RATE_LIMIT_PER_SECOND: "100000",
      RATE_LIMIT_BURST: "100000",
    };
    acme = JSON.parse((await cli(backend.env, "tenant", "create", "acme", "--json")).out);
    beta = JSON.parse((await cli(backend.env, "tenant", "create", "beta", "--json")).out);
    expect((await cli(backend.env, "domain", "add", "acme", "example.com")).code).toBe(0);
    expect((await cli(backend.env, "domain", "add", "beta", "example.de")).code).toBe(0);
    const imported = await cli(backend.env, "import", ...reports);
    expect(imported.code, imported.err).toBe(0);
    handle = await startTestService(env);
  });

  afterAll(async () => {
    await handle?.stop();
    await backend?.cleanup();
    await deleteStream(stream);
  });

  it("publishes every tenant's events as its feed shows them, on its own subjects, the id as Nats-Msg-Id", async () => {
    const { messages, feeds } = await published();
    for (const tenant of [acme, beta]) {
      const feed = feeds.get(tenant.tenantId)!;
      const onSubjects = messages.filter((message) =>
        message.subject.startsWith(`${prefix}.${tenant.tenantId}.`),
      );
      // The same events, in the same order, the same bodies: the HTTP feed's.
      expect(onSubjects.map((message) => message.body)).toEqual(feed);
      for (const message of onSubjects) {
        expect(message.subject).toBe(`${prefix}.${tenant.tenantId}.${message.body.type}`);
        expect(message.msgId).toBe(message.body.id);
      }
    }
    // Nothing else: no event of no tenant, none on another tenant's subject.
    const subjects = new Set(messages.map((message) => message.subject.split(".")[1]));
    expect(subjects).toEqual(new Set([acme.tenantId, beta.tenantId]));
    expect(JSON.stringify(messages)).not.toContain('"sealed"');
    expect(JSON.stringify(messages)).not.toContain("keyHash");
    // The stream was made with limits.
    const config = await streamConfig(stream);
    expect(config).toMatchObject({ subjects: [`${prefix}.>`] });
    expect(config!.max_age).toBeGreaterThan(0);
    expect(config!.max_bytes).toBeGreaterThan(0);
    expect(config!.duplicate_window).toBeGreaterThan(0);
  });

  it("resumes from its checkpoint after a crash: nothing lost, duplicates dropped by the stream", async () => {
    const before = (await published()).messages;
    // A crash between publishing and checkpointing leaves the checkpoint behind: the whole history
    // goes out again on the next start.
    await handle!.stop();
    handle = undefined;
    const runtime = await openRuntime(backend.env);
    await sql`delete from feed_publisher_checkpoint`.execute(runtime.db);
    await runtime.close();
    handle = await startTestService(env);
    const added = await handle.put("add_domain", acme.apiKey, { domain: "example.net" });
    expect(added.status, JSON.stringify(added.json)).toBe(200);
    const after = (await published()).messages;
    // The events before, once each, then the new DomainAdded (and what came with it).
    expect(after.slice(0, before.length).map((message) => message.body.id)).toEqual(
      before.map((message) => message.body.id),
    );
    expect(new Set(after.map((message) => message.body.id)).size).toBe(after.length);
    expect(
      after
        .slice(before.length)
        .some(
          (message) =>
            message.body.type === "DomainAdded" &&
            (message.body.data as { domain: string }).domain === "example.net",
        ),
    ).toBe(true);
  });
});
