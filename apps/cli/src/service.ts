import type { AddressInfo } from "node:net";
import { type ApiConfig, apiConfigFromEnv, createApiApp } from "@dmarc-ledger/api";
import { domainStatusChecker, onboardingSettingsFromEnv } from "@dmarc-ledger/onboarding";
import { runProjector } from "@dmarc-ledger/projector";
import { allProjections, catchUp, countTenants } from "@dmarc-ledger/read-models";
import type { Runtime } from "@dmarc-ledger/runtime";
import { resolverFromEnv, startSafeSpfWorker } from "@dmarc-ledger/safe-spf-service";
import {
  sourceIpResolverSettingsFromEnv,
  startSourceIpResolverFromSettings,
} from "@dmarc-ledger/source-names";
import { createTenant } from "@dmarc-ledger/tenancy";
import type { Logger } from "pino";

export interface RunningService {
  /** The API root, e.g. http://localhost:8080/api/ */
  apiRoot: string;
  config: ApiConfig;
  /** Set on the first start of an empty service: the key of the tenant created for the reader. */
  bootstrapKey: { tenantId: string; apiKey: string } | null;
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
}

/** The API and the projector in one process: what `dmarc-ledger start` runs. */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const { runtime, env, logger } = options;
  const sourceNames = sourceIpResolverSettingsFromEnv(env);
  const onboarding = onboardingSettingsFromEnv(env);
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

  const projector = runProjector(runtime, logger, env);
  const safeSpf = startSafeSpfWorker({
    store: runtime.store,
    db: runtime.db,
    resolver: resolverFromEnv(env),
    ...(env.SAFE_SPF_ZONE ? { publishZone: env.SAFE_SPF_ZONE } : {}),
    onError: (error) => logger.error({ err: error }, "Safe SPF process failed; retrying"),
  });
  // Off unless DNS_NAMESERVERS is set or SOURCE_IP_RESOLVER=on (packages/source-names/README.md).
  const sourceIpResolver = startSourceIpResolverFromSettings(sourceNames, {
    store: runtime.store,
    db: runtime.db,
    onError: (error) => logger.error({ err: error }, "source-IP resolver failed; retrying"),
    onResolved: (answer) => logger.debug({ sourceIp: answer }, "source IP resolved"),
  });
  const app = createApiApp({
    db: runtime.db,
    store: runtime.store,
    projections: allProjections,
    config: provisional,
    logger,
    checkDomainStatus: domainStatusChecker(onboarding),
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

  return {
    apiRoot: config.publicBaseUrl,
    config,
    bootstrapKey,
    async stop() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await safeSpf.stop();
      await sourceIpResolver?.stop();
      await projector.stop();
    },
  };
}
