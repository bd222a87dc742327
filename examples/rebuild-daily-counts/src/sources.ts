import { DeliverPolicy, jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { apply, type FeedEvent, type State } from "./daily-counts.js";

export interface Api {
  /** The API root, e.g. http://localhost:8080/api/ */
  root: string;
  key: string;
}

interface Page {
  events: FeedEvent[];
  next: string;
}

async function get(api: Api, query: string): Promise<Page | null> {
  const response = await fetch(new URL(`events?${query}`, api.root), {
    headers: { Authorization: `Bearer ${api.key}` },
  });
  // A domain no longer ours (removed since): its DomainRemoved comes later in the feed.
  if (response.status === 404) return null;
  if (!response.ok) throw new Error(`GET events?${query}: ${response.status} ${await response.text()}`);
  return (await response.json()) as Page;
}

/** Reads the reports a domain added later brings: those before its DomainAdded's cursor. */
async function backfill(api: Api, state: State, domain: string, before: string): Promise<void> {
  let after = "";
  for (;;) {
    const page = await get(
      api,
      `domain=${encodeURIComponent(domain)}&before=${before}&limit=1000${after && `&after=${after}`}`,
    );
    if (!page || page.events.length === 0) return;
    for (const event of page.events) apply(state, event);
    after = page.next;
  }
}

async function applyWithBackfill(api: Api, state: State, event: FeedEvent): Promise<void> {
  const added = apply(state, event);
  if (added) await backfill(api, state, added, event.cursor);
}

/**
 * Tails GET events from the state's cursor: with `once`, until caught up; else for ever, each
 * request waiting up to 30 s for the next events. `save` runs after every page.
 */
export async function tailHttp(api: Api, state: State, save: () => void, once: boolean): Promise<void> {
  for (;;) {
    const page = await get(
      api,
      `limit=1000&wait=${once ? 0 : 30}${state.cursor ? `&after=${state.cursor}` : ""}`,
    );
    if (!page) throw new Error("GET events answered 404");
    for (const event of page.events) await applyWithBackfill(api, state, event);
    state.cursor = page.next;
    save();
    if (once && page.events.length === 0) return;
  }
}

export interface Nats {
  url: string;
  stream: string;
  /** Your tenant's subjects: `dmarc-ledger.<tenant id>.>`. */
  subject: string;
}

/**
 * Reads the tenant's events from the NATS JetStream stream after the state's sequence (the
 * reports a domain added later brings come from GET events all the same): with `once`, until
 * caught up; else polling each second.
 */
export async function tailNats(
  nats: Nats,
  api: Api,
  state: State,
  save: () => void,
  once: boolean,
): Promise<void> {
  const nc = await connect({ servers: nats.url });
  try {
    // An ordered consumer: the server delivers the tenant's subjects in the stream's order from
    // the sequence after the last one applied; nothing is left on the server between runs.
    const consumer = await jetstream(nc).consumers.get(nats.stream, {
      filter_subjects: nats.subject,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: state.natsSequence + 1,
    });
    for (;;) {
      const message = await consumer.next({ expires: 1000 });
      if (!message) {
        save();
        if (once) return;
        continue;
      }
      const event = message.json<FeedEvent>();
      // The stream keeps an event once; a consumer that also read the feed dedupes by id.
      await applyWithBackfill(api, state, event);
      state.natsSequence = message.seq;
      state.cursor = event.cursor;
    }
  } finally {
    await nc.close();
  }
}
