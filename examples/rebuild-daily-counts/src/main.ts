/**
 * Keeps per-domain daily message counts of one tenant from its events, in a JSON file:
 *
 *   tsx src/main.ts --api http://localhost:8080/api/ --key dlk_… --store counts.json [--once]
 *   tsx src/main.ts … --nats nats://127.0.0.1:4222 --stream DMARC_LEDGER_EVENTS --subject 'dmarc-ledger.<tenant id>.>'
 *
 * `--once` reads until caught up and exits; without, it tails. `--print` writes the counts as
 * JSON ({domain: {day: messages}}) to standard output at the end.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { dailyCounts, emptyState, type State } from "./daily-counts.js";
import { tailHttp, tailNats } from "./sources.js";

const { values } = parseArgs({
  options: {
    api: { type: "string", default: "http://localhost:8080/api/" },
    key: { type: "string", default: process.env.DMARC_LEDGER_KEY },
    store: { type: "string", default: "daily-counts.json" },
    once: { type: "boolean", default: false },
    print: { type: "boolean", default: false },
    nats: { type: "string" },
    stream: { type: "string", default: "DMARC_LEDGER_EVENTS" },
    subject: { type: "string" },
  },
});
if (!values.key) throw new Error("--key (or DMARC_LEDGER_KEY) is required: an API key with the read scope");

const state: State = existsSync(values.store) ? JSON.parse(readFileSync(values.store, "utf8")) : emptyState();
/** Written whole to a new file, then renamed over the old one: a crash leaves one or the other. */
const save = () => {
  writeFileSync(`${values.store}.tmp`, JSON.stringify(state));
  renameSync(`${values.store}.tmp`, values.store);
};
const api = { root: values.api, key: values.key };

if (values.nats) {
  if (!values.subject) throw new Error("--subject is required with --nats: dmarc-ledger.<tenant id>.>");
  await tailNats(
    { url: values.nats, stream: values.stream, subject: values.subject },
    api,
    state,
    save,
    values.once,
  );
} else {
  await tailHttp(api, state, save, values.once);
}
if (values.print) {
  const counts = Object.fromEntries(state.owned.sort().map((domain) => [domain, dailyCounts(state, domain)]));
  process.stdout.write(`${JSON.stringify(counts)}\n`);
}
