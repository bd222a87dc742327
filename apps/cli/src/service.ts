import {
  type ApiConfig,
  apiConfigFrom,
  apiSettings,
  type BoundServer,
  bindPort,
  builtDashboard,
  countingAppends,
  createApiApp,
  createServiceMetrics,
} from "@dmarc-ledger/api";
import { parseSettings } from "@dmarc-ledger/config";
import { dnsSettingsFromEnv, startDnsServer } from "@dmarc-ledger/dns";
import { ingestSettingsFromEnv, type RunningIngest, startIngest } from "@dmarc-ledger/ingest";
import { intakeLimits, intakeSettingsFromEnv } from "@dmarc-ledger/ingestion";
import { domainStatusChecker, onboardingSettingsFromEnv } from "@dmarc-ledger/onboarding";
import { projectorSettings, rankingMaintenanceFrom, runProjector } from "@dmarc-ledger/projector";
import { catchUp, countTenants } from "@dmarc-ledger/read-models";
import type { Runtime } from "@dmarc-ledger/runtime";
import { serviceProjections } from "@dmarc-ledger/runtime/projections";
import {
  resolverFrom,
  safeSpfRefreshSettingsFromEnv,
  safeSpfSettings,
  startSafeSpfRefresher,
  startSafeSpfWorker,
} from "@dmarc-ledger/safe-spf-service";
import {
  sourceIpResolverSettingsFromEnv,
  startSourceIpResolverFromSettings,
} from "@dmarc-ledger/source-names";
import { createTenant } from "@dmarc-ledger/tenancy";
import { addUser, setPasswordUrl, userSettingsFromEnv } from "@dmarc-ledger/users";
import type { Logger } from "pino";
import { startControlServer } from "./control/control-server.js";
import type { CliIO } from "./io.js";

export interface RunningService {
  /** The API root, e.g. http://localhost:8080/api/ */
  apiRoot: string;
  config: ApiConfig;
  /**
   * Set on the first start of an empty service: the key of the tenant created for the reader,
   * and its first admin's one-time set-password link.
   */
  bootstrapKey: { tenantId: string; apiKey: string; adminEmail: string; adminLink: string } | null;
  /** Where the dashboard is, or null when apps/web has not been built. */
  dashboardUrl: string | null;
  /** The report intake channels (SMTP when REPORTS_DOMAIN is set, IMAP when IMAP_URL is). */
  ingest: RunningIngest;
  /** The DNS server's port (UDP and TCP), or null when SAFE_SPF_ZONE is unset and it does not run. */
  dnsPort: number | null;
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
  /**
   * In embedded mode, run the CLI's commands handed over the data directory's control socket
   * with this (the CLI's own entry point), since this process holds the directory.
   */
  controlCommands?: (argv: string[], io: CliIO) => Promise<number>;
}

/**
 * Everything `dmarc-ledger start` runs in one process: the API, the projector, the Safe SPF
 * process and its refresher, the source-IP resolver, the report intake and the DNS server (when
 * configured).
 */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const { runtime, env, logger } = options;
  // Every variable checked (ConfigError) before the port is bound or a row written.
  const settings = parseSettings({ ...apiSettings, ...safeSpfSettings, ...projectorSettings }, env);
  const ingestSettings = ingestSettingsFromEnv(env);
  const intake = intakeLimits(intakeSettingsFromEnv(env));
  // DNS_PORT defaults to 5353 here (53 needs privileges).
  const dnsSettings = dnsSettingsFromEnv(env, { defaultPort: 5353, required: false });
  const refreshSettings = safeSpfRefreshSettingsFromEnv(env);
  const sourceNames = sourceIpResolverSettingsFromEnv(env);
  const onboarding = onboardingSettingsFromEnv(env);
  const users = userSettingsFromEnv(env);
  const bound = options.server ?? (await bindPort(options.port));
  const config = apiConfigFrom(settings, bound.port);
  const webRoot = builtDashboard();
  const running: { stop(): Promise<void> }[] = [];
  try {
    const metrics = createServiceMetrics({
      db: runtime.db,
      store: runtime.store,
      projections: serviceProjections,
    });
    const store = countingAppends(runtime.store, metrics.eventsAppended);
    // Catch up before answering, so the first requests see everything stored so far.
    await catchUp({ store, db: runtime.db, projections: serviceProjections });

    // Only now, with the port held, may the first tenant be made: its key is printed next.
    let bootstrapKey: RunningService["bootstrapKey"] = null;
    if (options.bootstrapTenant && (await countTenants(runtime.db)) === 0) {
      const created = await createTenant(
        store,
        { name: "default", region: config.region },
        { causedBy: "process:start" },
      );
      const admin = await addUser(
        store,
        runtime.db as never,
        {
          tenantId: created.tenantId,
          email: users.firstAdminEmail,
          role: "admin",
          linkTtlMs: users.passwordLinkTtlMs,
        },
        { causedBy: "process:start" },
      );
      await catchUp({ store, db: runtime.db, projections: serviceProjections });
      bootstrapKey = {
        tenantId: created.tenantId,
        apiKey: created.apiKey,
        adminEmail: admin.email,
        adminLink: setPasswordUrl(config.dashboardUrl, admin.link),
      };
    }

    const dns = dnsSettings ? await startDnsServer({ store, settings: dnsSettings, logger }) : null;
    if (dns) running.push(dns);
    running.push(runProjector({ ...runtime, store }, logger, rankingMaintenanceFrom(settings)));
    // One resolver for the worker and the refresher: its TTL cache is shared by every domain.
    const resolver = resolverFrom(settings);
    const publishZone = settings.SAFE_SPF_ZONE ? { publishZone: settings.SAFE_SPF_ZONE } : {};
    running.push(
      startSafeSpfWorker({
        store,
        db: runtime.db,
        resolver,
        ...publishZone,
        onError: (error) => logger.error({ err: error }, "Safe SPF process failed; retrying"),
      }),
    );
    running.push(
      startSafeSpfRefresher({
        store,
        db: runtime.db,
        resolver,
        settings: refreshSettings,
        ...publishZone,
        onError: (error) => logger.error({ err: error }, "Safe SPF refresher failed; retrying"),
        onRefreshed: (domain, outcome) => {
          if (outcome.kind === "changed")
            logger.info(
              { domain, added: outcome.added, removed: outcome.removed },
              "Safe SPF record changed",
            );
          else if (outcome.kind === "failed" && outcome.appended)
            logger.warn(
              { domain, failure: outcome.failure },
              "Safe SPF refresh failed; the last good record stays",
            );
        },
      }),
    );
    // Off unless DNS_NAMESERVERS is set or SOURCE_IP_RESOLVER=on (packages/source-names/README.md).
    const sourceIpResolver = startSourceIpResolverFromSettings(sourceNames, {
      store,
      db: runtime.db,
      onError: (error) => logger.error({ err: error }, "source-IP resolver failed; retrying"),
      onResolved: (answer) => logger.debug({ sourceIp: answer }, "source IP resolved"),
    });
    if (sourceIpResolver) running.push(sourceIpResolver);
    const app = createApiApp({
      db: runtime.db,
      store,
      projections: serviceProjections,
      config,
      logger,
      metrics,
      checkDomainStatus: domainStatusChecker(onboarding),
      users,
      webRoot,
      reportAddresses: ingestSettings.smtp?.reportAddresses ?? [],
    });
    bound.serve(app.callback());
    const ingest = await startIngest({
      store,
      database: runtime.database,
      limits: intake,
      settings: ingestSettings,
      logger,
      metrics: metrics.intake,
    });
    running.push(ingest);
    const control =
      options.controlCommands && !env.DATABASE_URL
        ? await startControlServer({
            dataDir: env.DMARC_LEDGER_DATA_DIR || "./data",
            runtime,
            logger,
            run: options.controlCommands,
          })
        : null;
    if (control) running.push(control);

    return {
      apiRoot: config.publicBaseUrl,
      config,
      bootstrapKey,
      dashboardUrl: webRoot ? config.dashboardUrl : null,
      ingest,
      dnsPort: dns?.ports.udp ?? null,
      async stop() {
        // No new commands or reports first, then no new requests; then the background parts,
        // the Safe SPF processes before the projector (they append events it then applies).
        if (control) await control.stop();
        await ingest.stop();
        await bound.close();
        for (const part of [...running].reverse()) {
          if (part !== control && part !== ingest) await part.stop();
        }
      },
    };
  } catch (error) {
    for (const part of [...running].reverse()) await part.stop().catch(() => {});
    await bound.close(0);
    throw error;
  }
}
