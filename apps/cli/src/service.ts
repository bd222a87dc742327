import { alertsSettings } from "@dmarc-ledger/alerts/settings";
import {
  type ApiConfig,
  apiConfigFrom,
  apiSettings,
  type BoundServer,
  bindPort,
  builtDashboard,
  countingAppends,
  createServiceMetrics,
  startApiApp,
} from "@dmarc-ledger/api";
import { parseSettings } from "@dmarc-ledger/config";
import { dnsSettingsFromEnv, startDnsApp } from "@dmarc-ledger/dns";
import { eventBrokerSettingsFromEnv } from "@dmarc-ledger/event-feed/settings";
import { intakeLimits, intakeSettingsFromEnv } from "@dmarc-ledger/intake";
import {
  intakeChannelSettingsFromEnv,
  type RunningIntake,
  startIntakeApp,
} from "@dmarc-ledger/intake-process";
import { domainStatusChecker, onboardingSettingsFromEnv } from "@dmarc-ledger/onboarding";
import { type StopProgress, unwatchedStop } from "@dmarc-ledger/process";
import { catchUp } from "@dmarc-ledger/projection-engine";
import { projectorSettings, startProjectorApp } from "@dmarc-ledger/projector";
import { type Runtime, runtimeDataKeys } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import { resolverFrom, safeSpfRefreshSettingsFromEnv, safeSpfSettings } from "@dmarc-ledger/safe-spf-service";
import { sourceIpResolverSettingsFromEnv } from "@dmarc-ledger/source-names";
import { countTenants, createTenant } from "@dmarc-ledger/tenancy";
import { addUser, setPasswordUrl, userSettingsFromEnv } from "@dmarc-ledger/users";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
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
  intake: RunningIntake;
  /** The DNS server's port (UDP and TCP), or null when SAFE_SPF_ZONE is unset and it does not run. */
  dnsPort: number | null;
  /** Whether reverse DNS of report sources is asked, and of whom (SOURCE_IP_RESOLVER, DNS_NAMESERVERS). */
  reverseDns: { enabled: boolean; nameservers: string[] };
  /**
   * Stops accepting, finishes the requests in flight and the projection batch being applied,
   * then stops the background processes. The runtime stays open (its owner closes it).
   * `progress` is told each part as it stops (stopWithin names those still stopping at its deadline).
   */
  stop(progress?: StopProgress): Promise<void>;
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
  /** The registry the bound port has served /metrics from while the service started (processMetrics). */
  metricsRegistry?: Registry;
}

/**
 * Everything `dmarc-ledger start` runs in one process: the API, the projector, the Safe SPF
 * process and its refresher, the source-IP resolver, the report intake and the DNS server (when
 * configured).
 */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const { runtime, env, logger } = options;
  // Every variable checked (ConfigError) before the port is bound or a row written.
  const settings = parseSettings(
    { ...apiSettings, ...safeSpfSettings, ...projectorSettings, ...alertsSettings },
    env,
  );
  const intakeChannels = intakeChannelSettingsFromEnv(env);
  const intakeLimitsOfStart = intakeLimits(intakeSettingsFromEnv(env));
  // DNS_PORT defaults to 5353 here (53 needs privileges).
  const dnsSettings = dnsSettingsFromEnv(env, { defaultPort: 5353, required: false });
  const refreshSettings = safeSpfRefreshSettingsFromEnv(env);
  const sourceNames = sourceIpResolverSettingsFromEnv(env);
  const onboarding = onboardingSettingsFromEnv(env);
  const users = userSettingsFromEnv(env);
  const eventBroker = eventBrokerSettingsFromEnv(env);
  // A wrong MASTER_KEY is refused before the port is bound (a missing one is made, embedded).
  const dataKeys = await runtimeDataKeys(runtime, env);
  const bound =
    options.server ??
    (await bindPort(options.port, undefined, { maxConnectionsPerIp: settings.MAX_CONNECTIONS_PER_IP }));
  const config = apiConfigFrom(settings, bound.port);
  const webRoot = builtDashboard();
  // What has started, to be stopped if a later step of the start fails.
  const running: { stop(): Promise<void> }[] = [];
  try {
    const metrics = createServiceMetrics(
      { db: runtime.db, store: runtime.store, projections: allProjections },
      options.metricsRegistry,
    );
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
      const admin = await addUser(
        store,
        runtime.db as never,
        dataKeys,
        {
          tenantId: created.tenantId,
          email: users.firstAdminEmail,
          role: "admin",
          linkTtlMs: users.passwordLinkTtlMs,
        },
        { causedBy: "process:start" },
      );
      await catchUp({ store, db: runtime.db, projections: allProjections });
      bootstrapKey = {
        tenantId: created.tenantId,
        apiKey: created.apiKey,
        adminEmail: admin.email,
        adminLink: setPasswordUrl(config.dashboardUrl, admin.link),
      };
    }

    // The apps, as each runs as a process of its own, with one resolver for the Safe SPF process
    // and the refresher: its TTL cache is shared by every domain. The DNS app first: a DNS port
    // that cannot be had stops the start before anything runs. `stop` below stops the DNS app (its
    // refresher appends events) before the projector app, as a failed start does (`running` reversed).
    const resolver = resolverFrom(settings);
    const parts = { ...runtime, store };
    const dnsApp = await startDnsApp({
      runtime: parts,
      logger,
      settings,
      dns: dnsSettings,
      refresh: refreshSettings,
      sourceNames,
      resolver,
    });
    const projectorApp = startProjectorApp({
      dataKeys,
      runtime: parts,
      logger,
      settings,
      resolver,
      checkDomainStatus: domainStatusChecker(onboarding),
      eventBroker: eventBroker && { settings: eventBroker, source: config.publicBaseUrl },
    });
    running.push(projectorApp, dnsApp);
    startApiApp({
      dataKeys,
      server: bound,
      db: runtime.db,
      store,
      projections: allProjections,
      config,
      logger,
      metrics,
      checkDomainStatus: domainStatusChecker(onboarding),
      users,
      webRoot,
      reportAddresses: intakeChannels.smtp?.reportAddresses ?? [],
      mailIntake: { smtp: !!intakeChannels.smtp, imap: !!intakeChannels.imap },
      sharedRateLimits: runtime.database.concurrentSessions,
    });
    const intake = await startIntakeApp({
      dataKeys,
      store,
      database: runtime.database,
      limits: intakeLimitsOfStart,
      settings: intakeChannels,
      logger,
      metrics: metrics.intake,
    });
    running.push(intake);
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
      intake,
      dnsPort: dnsApp.server?.ports.udp ?? null,
      reverseDns: { enabled: sourceNames.enabled, nameservers: sourceNames.nameservers },
      async stop(progress = unwatchedStop) {
        // No new commands or reports first, then no new requests; then the DNS app (its
        // refresher appends events) before the projector app.
        if (control) await progress.part("the control socket", () => control.stop());
        await progress.part("the intake", () => intake.stop());
        await progress.part("the HTTP server", () => bound.close());
        await progress.part("the DNS app", () => dnsApp.stop());
        await progress.part("the projector app", () => projectorApp.stop(progress));
      },
    };
  } catch (error) {
    for (const part of [...running].reverse()) await part.stop().catch(() => {});
    await bound.close(0);
    throw error;
  }
}
