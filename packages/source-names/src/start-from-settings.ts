import type { EventStore } from "@dmarc-ledger/event-store";
import type { SourceIpResolved } from "@dmarc-ledger/events";
import { createResolver } from "@dmarc-ledger/safe-spf";
import type { Kysely } from "kysely";
import type { SourceIpNameSchema } from "./schema.js";
import type { SourceIpResolverSettings } from "./settings.js";
import { type RunningSourceIpResolver, startSourceIpResolver } from "./source-ip-resolver.js";
import { lazySourceNamer } from "./source-namer.js";

/**
 * The resolver as a process runs it from its settings. It always runs: every source is named at
 * first sight from the offline databases and the reports; the settings say whether DNS is asked.
 */
export function startSourceIpResolverFromSettings(
  settings: SourceIpResolverSettings,
  deps: {
    store: EventStore;
    db: Kysely<SourceIpNameSchema>;
    onError?: (error: unknown) => void;
    onResolved?: (answer: SourceIpResolved) => void;
  },
): RunningSourceIpResolver {
  return startSourceIpResolver({
    store: deps.store,
    db: deps.db,
    resolver: createResolver({ nameservers: settings.nameservers, timeoutMs: settings.timeoutMs }),
    namer: lazySourceNamer(settings.serviceMapFile),
    reverseDns: settings.enabled,
    ratePerSecond: settings.ratePerSecond,
    concurrency: settings.concurrency,
    refreshAgeSeconds: settings.refreshAgeSeconds,
    retryAgeSeconds: settings.retryAgeSeconds,
    ...(deps.onError ? { onError: deps.onError } : {}),
    ...(deps.onResolved ? { onResolved: deps.onResolved } : {}),
  });
}
