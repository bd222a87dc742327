// The DNS server as a process of its own (production layout): `tsx apps/dns/src/main.ts`.
// Several may run at once: each follows the event store into its own in-memory zone.
import { openRuntime } from "@dmarc-ledger/runtime";
import { pino } from "pino";
import { startDnsServer } from "./dns-server.js";
import { dnsSettingsFromEnv } from "./settings.js";

const logger = pino({ name: "dns", level: process.env.LOG_LEVEL ?? "info" });
// Every setting is checked before anything opens or listens.
const settings = dnsSettingsFromEnv(process.env, { defaultPort: 53, required: true })!;
const runtime = await openRuntime();
const dns = await startDnsServer({ store: runtime.store, settings, logger });
logger.info(`serving DNS on ${dns.host}:${dns.ports.udp} (UDP and TCP) from ${runtime.description}`);

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, async () => {
    await dns.stop();
    await runtime.close();
    logger.info("stopped");
    process.exit(0);
  });
}
