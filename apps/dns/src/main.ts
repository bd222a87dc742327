// The DNS server as a process of its own (production layout): `tsx apps/dns/src/main.ts`.
// Several may run at once: each follows the event store into its own in-memory zone.
// More work beside the server (a refresher, a PTR resolver) is started after it and stopped in
// `stopAll`, in reverse order.
import { ConfigError } from "@dmarc-ledger/config";
import { openRuntime } from "@dmarc-ledger/runtime";
import { pino } from "pino";
import { startDnsServer } from "./dns-server.js";
import { type DnsSettings, dnsSettingsFromEnv } from "./settings.js";

const logger = pino({ name: "dns", level: process.env.LOG_LEVEL ?? "info" });

let settings: DnsSettings;
try {
  // Every setting is checked before anything opens or listens.
  settings = dnsSettingsFromEnv(process.env, { defaultPort: 53, required: true })!;
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  logger.fatal({ problems: error.problems }, error.message);
  process.exit(1);
}

const runtime = await openRuntime();
const dns = await startDnsServer({ store: runtime.store, settings, logger });
logger.info(`serving DNS on ${dns.host}:${dns.ports.udp} (UDP and TCP) from ${runtime.description}`);
const stopAll = async () => {
  await dns.stop();
  await runtime.close();
};

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, async () => {
    await stopAll();
    logger.info("stopped");
    process.exit(0);
  });
}
