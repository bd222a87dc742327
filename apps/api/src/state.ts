import type { AnySchema } from "@dmarc-ledger/db";
import type { EventStore } from "@dmarc-ledger/event-store";
import type { DomainStatusChecker } from "@dmarc-ledger/onboarding";
import type { Projection } from "@dmarc-ledger/projection-engine";
import type { KeyHolder } from "@dmarc-ledger/tenancy";
import type { DefaultContext, ParameterizedContext } from "koa";
import type { Kysely } from "kysely";
import type { Logger } from "pino";
import type { AnswerCache } from "./answer-cache.js";
import type { ApiConfig } from "./config.js";
import type { ServiceMetrics } from "./observability/metrics.js";

export interface ApiDeps {
  db: Kysely<AnySchema>;
  store: EventStore;
  /** The projections the API reads, to wait for after a write. */
  projections: readonly Projection[];
  config: ApiConfig;
  logger: Logger;
  /** The process's metrics; the app makes its own when absent. */
  metrics?: ServiceMetrics;
  /** The onboarding check behind GET domain_status; without it that endpoint answers 503. */
  checkDomainStatus?: DomainStatusChecker;
  /** The list endpoints' kept answers; the app makes one of config.answerCacheBytes when absent. */
  answers?: AnswerCache;
}

export interface ApiState {
  requestId: string;
  holder?: KeyHolder;
  /** Why the request could not be authenticated, raised once rate limiting has counted it. */
  authError?: Error;
}

export type ApiContext = ParameterizedContext<ApiState, DefaultContext & { deps: ApiDeps }>;
