import type { AnySchema } from "@dmarc-ledger/db";
import type { EventStore } from "@dmarc-ledger/event-store";
import type { DomainStatusChecker } from "@dmarc-ledger/onboarding";
import type { Projection } from "@dmarc-ledger/projection-engine";
import { sharedRateLimiter } from "@dmarc-ledger/rate-limits";
import type { ReadReplica } from "@dmarc-ledger/read-replica";
import type { UserSettings } from "@dmarc-ledger/users";
import type { Kysely } from "kysely";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { createApiApp } from "./app.js";
import type { ApiConfig } from "./config.js";
import type { BoundServer } from "./listen.js";
import { countingAppends, createServiceMetrics, type ServiceMetrics } from "./observability/metrics.js";
import type { ApiDeps } from "./state.js";

export interface ApiAppOptions {
  /** Bound before anything was opened (bindPort): until now it answered 503 "starting". */
  server: BoundServer;
  db: Kysely<AnySchema>;
  store: EventStore;
  /** The projections a write waits for, and whose lag /metrics shows. */
  projections: readonly Projection[];
  config: ApiConfig;
  logger: Logger;
  checkDomainStatus: DomainStatusChecker;
  /**
   * The process's metrics, with `store` counting its appends into them (countingAppends), when
   * the process made them before (`start`, whose other parts count into them too); made here
   * otherwise.
   */
  metrics?: ServiceMetrics;
  /**
   * Where the metrics made here go: the registry the bound port served /metrics from while the
   * process started (processMetrics of @dmarc-ledger/process).
   */
  registry?: Registry;
  /** The dashboard's sessions and links (ApiDeps). */
  users?: UserSettings;
  /** Seal uploads and open /forensic (ApiDeps). */
  dataKeys?: ApiDeps["dataKeys"];
  /** The dashboard's built files, served at / (ApiDeps). */
  webRoot?: string | null;
  /** Where reports reach the service by mail, which the dashboard says to publish (ApiDeps). */
  reportAddresses?: readonly string[];
  /** Which mail intake channels run beside it (ApiDeps). */
  mailIntake?: ApiDeps["mailIntake"];
  /**
   * Whether the rate limits are the deployment's, counted in the database that every API
   * process shares (PostgreSQL), rather than this process's (embedded PGlite: one process).
   */
  sharedRateLimits?: boolean;
  /** A streaming replica the list endpoints read (ApiDeps). */
  replica?: ReadReplica | null;
}

/**
 * The API app: serves the HTTP API on the bound port. What apps/api/src/main.ts runs as a process
 * of its own, and `dmarc-ledger start` beside its other parts. The server's owner closes it.
 */
export function startApiApp(options: ApiAppOptions): { metrics: ServiceMetrics } {
  const { server, db, projections } = options;
  const metrics =
    options.metrics ?? createServiceMetrics({ db, store: options.store, projections }, options.registry);
  const store = options.metrics ? options.store : countingAppends(options.store, metrics.eventsAppended);
  const app = createApiApp({
    db,
    store,
    projections,
    config: options.config,
    logger: options.logger,
    metrics,
    checkDomainStatus: options.checkDomainStatus,
    ...(options.users ? { users: options.users } : {}),
    ...(options.webRoot !== undefined ? { webRoot: options.webRoot } : {}),
    ...(options.reportAddresses ? { reportAddresses: options.reportAddresses } : {}),
    ...(options.mailIntake ? { mailIntake: options.mailIntake } : {}),
    ...(options.replica ? { replica: options.replica } : {}),
    ...(options.sharedRateLimits ? { rateLimiter: sharedRateLimiter(db, options.config.rateLimit) } : {}),
    ...(options.dataKeys ? { dataKeys: options.dataKeys } : {}),
  });
  server.serve(app.callback());
  // Once listening, an accept that fails (EMFILE) is emitted on the server: said in the log, not
  // thrown at the process. Errors of one connection are Node's (clientError answers and closes).
  server.server.on("error", (error) => options.logger.warn({ err: error }, "HTTP server error"));
  return { metrics };
}
