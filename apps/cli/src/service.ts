import {
  type ApiConfig,
  apiConfigFrom,
  apiSettings,
  type BoundServer,
  bindPort,
  countingAppends,
  createApiApp,
  createServiceMetrics,
} from "@dmarc-ledger/api";
import { parseSettings } from "@dmarc-ledger/config";
import { projectorSettings, rankingMaintenanceFrom, runProjector } from "@dmarc-ledger/projector";
import { allProjections, catchUp, countTenants } from "@dmarc-ledger/read-models";
import type { Runtime } from "@dmarc-ledger/runtime";
import { resolverFrom, safeSpfSettings, startSafeSpfWorker } from "@dmarc-ledger/safe-spf-service";
import { createTenant } from "@dmarc-ledger/tenancy";
import type { Logger } from "pino";

export interface RunningService {
  /** The API root, e.g. http://localhost:8080/api/ */
  apiRoot: string;
  config: ApiConfig;
  /** Set on the first start of an empty service: the key of the tenant created for the reader. */
  bootstrapKey: { tenantId: string; apiKey: string } | null;
  /**
   * Stops accepting, finishes the requests in flight and the projection batch being applied,
   * then stops the background processes. The runtime stays open (its owner closes it).
   */
  stop(): Promise<void>;
}

export interface ServiceOptions {
  runtime: Runtime;
  env: NodeJS.ProcessEnv;
  /** 0 picks a free port; ignored when `server` is given. */
  port: number;
  /** A port bound already (bindPort), so that nothing was opened before it was known to work. */
  server?: BoundServer;
  logger: Logger;
  /** Create a first tenant when there is none, so that a new user has a key to try. */
  bootstrapTenant: boolean;
}

/** The API and the projector in one process: what `dmarc-ledger start` runs. */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const { runtime, env, logger } = options;
  // Every variable checked (ConfigError) before the port is bound or a row written.
  const settings = parseSettings({ ...apiSettings, ...safeSpfSettings, ...projectorSettings }, env);
  const bound = options.server ?? (await bindPort(options.port));
  const config = apiConfigFrom(settings, bound.port);
  const running: { stop(): Promise<void> }[] = [];
  try {
    const metrics = createServiceMetrics({
      db: runtime.db,
      store: runtime.store,
      projections: allProjections,
    });
    const store = countingAppends(runtime.store, metrics.eventsAppended);
    // Catch up before answering, so the first requests see everything stored so far.
    await catchUp({ store, db: runtime.db, projections: allProjections });

    // Only now, with the port held, may the first tenant be made: its key is printed next.
    let bootstrapKey: RunningService["bootstrapKey"] = null;
    if (options.bootstrapTenant && (await countTenants(runtime.db)) === 0) {
      const created = await createTenant(
        store,
        { name: "default", region: config.region },
        { causedBy: "process:start" },
      );
      await catchUp({ store, db: runtime.db, projections: allProjections });
      bootstrapKey = { tenantId: created.tenantId, apiKey: created.apiKey };
    }

    running.push(runProjector({ ...runtime, store }, logger, rankingMaintenanceFrom(settings)));
    running.push(
      startSafeSpfWorker({
        store,
        db: runtime.db,
        resolver: resolverFrom(settings),
        ...(settings.SAFE_SPF_ZONE ? { publishZone: settings.SAFE_SPF_ZONE } : {}),
        onError: (error) => logger.error({ err: error }, "Safe SPF process failed; retrying"),
      }),
    );
    const app = createApiApp({
      db: runtime.db,
      store,
      projections: allProjections,
      config,
      logger,
      metrics,
    });
    bound.serve(app.callback());

    return {
      apiRoot: config.publicBaseUrl,
      config,
      bootstrapKey,
      async stop() {
        await bound.close();
        // The Safe SPF process first: it appends events the projector then applies.
        for (const part of [...running].reverse()) await part.stop();
      },
    };
  } catch (error) {
    for (const part of [...running].reverse()) await part.stop().catch(() => {});
    await bound.close(0);
    throw error;
  }
}
