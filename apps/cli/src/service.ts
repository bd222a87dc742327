import type { AddressInfo } from "node:net";
import { type ApiConfig, apiConfigFromEnv, createApiApp } from "@dmarc-ledger/api";
import { dnsSettingsFromEnv, startDnsServer } from "@dmarc-ledger/dns";
import { ingestSettingsFromEnv, type RunningIngest, startIngest } from "@dmarc-ledger/ingest";
import { intakeLimits, intakeSettingsFromEnv } from "@dmarc-ledger/ingestion";
import { runProjector } from "@dmarc-ledger/projector";
import { allProjections, catchUp, countTenants } from "@dmarc-ledger/read-models";
import type { Runtime } from "@dmarc-ledger/runtime";
import {
  resolverFromEnv,
  safeSpfRefreshSettingsFromEnv,
  startSafeSpfRefresher,
  startSafeSpfWorker,
} from "@dmarc-ledger/safe-spf-service";
import { createTenant } from "@dmarc-ledger/tenancy";
import type { Logger } from "pino";
import { type ControlServer, startControlServer } from "./control/control-server.js";
import type { CliIO } from "./io.js";

export interface RunningService {
  /** The API root, e.g. http://localhost:8080/api/ */
  apiRoot: string;
  config: ApiConfig;
  /** Set on the first start of an empty service: the key of the tenant created for the reader. */
  bootstrapKey: { tenantId: string; apiKey: string } | null;
  /** The report intake channels (SMTP when REPORTS_DOMAIN is set). */
  ingest: RunningIngest;
  /** The DNS server's port (UDP and TCP), or null when SAFE_SPF_ZONE is unset and it does not run. */
  dnsPort: number | null;
  stop(): Promise<void>;
}

export interface ServiceOptions {
  runtime: Runtime;
  env: NodeJS.ProcessEnv;
  /** 0 picks a free port. */
  port: number;
  logger: Logger;
  /** Create a first tenant when there is none, so that a new user has a key to try. */
  bootstrapTenant: boolean;
  /**
   * In embedded mode, run the CLI's commands handed over the data directory's control socket
   * with this (the CLI's own entry point), since this process holds the directory.
   */
  controlCommands?: (argv: string[], io: CliIO) => Promise<number>;
}

/** The API and the projector in one process: what `dmarc-ledger start` runs. */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const { runtime, env, logger } = options;
  const ingestSettings = ingestSettingsFromEnv(env);
  // Checked before anything listens; DNS_PORT defaults to 5353 here (53 needs privileges).
  const dnsSettings = dnsSettingsFromEnv(env, { defaultPort: 5353, required: false });
  // Validated before any work, so that a wrong setting stops the start with its name.
  const refreshSettings = safeSpfRefreshSettingsFromEnv(env);
  // Catch up before answering, so the first requests see everything stored so far.
  await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });

  // Links carry the port, which is known before listening only when it is not 0 (see below).
  const provisional = apiConfigFromEnv(env, options.port);
  let bootstrapKey: RunningService["bootstrapKey"] = null;
  if (options.bootstrapTenant && (await countTenants(runtime.db)) === 0) {
    const created = await createTenant(
      runtime.store,
      { name: "default", region: provisional.region },
      { causedBy: "process:start" },
    );
    await catchUp({ store: runtime.store, db: runtime.db, projections: allProjections });
    bootstrapKey = { tenantId: created.tenantId, apiKey: created.apiKey };
  }

  const dns = dnsSettings
    ? await startDnsServer({ store: runtime.store, settings: dnsSettings, logger })
    : null;
  const projector = runProjector(runtime, logger, env);
  // One resolver for the worker and the refresher: its TTL cache is shared by every domain.
  const resolver = resolverFromEnv(env);
  const safeSpf = startSafeSpfWorker({
    store: runtime.store,
    db: runtime.db,
    resolver,
    ...(env.SAFE_SPF_ZONE ? { publishZone: env.SAFE_SPF_ZONE } : {}),
    onError: (error) => logger.error({ err: error }, "Safe SPF process failed; retrying"),
  });
  const safeSpfRefresher = startSafeSpfRefresher({
    store: runtime.store,
    db: runtime.db,
    resolver,
    settings: refreshSettings,
    ...(env.SAFE_SPF_ZONE ? { publishZone: env.SAFE_SPF_ZONE } : {}),
    onError: (error) => logger.error({ err: error }, "Safe SPF refresher failed; retrying"),
    onRefreshed: (domain, outcome) => {
      if (outcome.kind === "changed")
        logger.info({ domain, added: outcome.added, removed: outcome.removed }, "Safe SPF record changed");
      else if (outcome.kind === "failed" && outcome.appended)
        logger.warn(
          { domain, failure: outcome.failure },
          "Safe SPF refresh failed; the last good record stays",
        );
    },
  });
  const app = createApiApp({
    db: runtime.db,
    store: runtime.store,
    projections: allProjections,
    config: provisional,
    logger,
  });
  const server = app.listen(options.port);
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  const port = (server.address() as AddressInfo).port;
  // With port 0 the real port is known only now; links must carry it.
  const config = apiConfigFromEnv(env, port);
  app.context.deps.config = config;
  let ingest: RunningIngest;
  try {
    ingest = await startIngest({
      store: runtime.store,
      database: runtime.database,
      limits: intakeLimits(intakeSettingsFromEnv(env)),
      settings: ingestSettings,
      logger,
    });
  } catch (error) {
    // E.g. the SMTP port is taken: stop what already runs rather than leave it half started.
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await safeSpf.stop();
    await projector.stop();
    await dns?.stop();
    throw error;
  }

  const control: ControlServer | null =
    options.controlCommands && !env.DATABASE_URL
      ? await startControlServer({
          dataDir: env.DMARC_LEDGER_DATA_DIR || "./data",
          runtime,
          logger,
          run: options.controlCommands,
        })
      : null;

  return {
    apiRoot: config.publicBaseUrl,
    config,
    bootstrapKey,
    ingest,
    dnsPort: dns?.ports.udp ?? null,
    async stop() {
      await control?.stop();
      await ingest.stop();
      await dns?.stop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await safeSpfRefresher.stop();
      await safeSpf.stop();
      await projector.stop();
    },
  };
}
