import type { AnySchema } from "@dmarc-ledger/db";
import type { EventStore } from "@dmarc-ledger/event-store";
import type { Scope } from "@dmarc-ledger/events";
import type { DomainStatusChecker } from "@dmarc-ledger/onboarding";
import type { DataKeys } from "@dmarc-ledger/personal-data";
import type { Projection } from "@dmarc-ledger/projection-engine";
import type { RateLimiter } from "@dmarc-ledger/rate-limits";
import type { ReadReplica } from "@dmarc-ledger/read-replica";
import type { Session, UserSettings } from "@dmarc-ledger/users";
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
  /** Session and set-password link lifetimes; the defaults when absent. */
  users?: UserSettings;
  /**
   * Counts requests per caller: the deployment's (sharedRateLimiter, through the database) when
   * several API processes share one; this process's alone when absent.
   */
  rateLimiter?: RateLimiter;
  /** A streaming replica the list endpoints read (DATABASE_REPLICA_URL); the primary when absent. */
  replica?: ReadReplica;
  /** The dashboard's built files (apps/web/dist), served at /; none when absent. */
  webRoot?: string | null;
  /**
   * Where reports reach this service by mail (rua@REPORTS_DOMAIN, …): the dashboard says what to
   * publish. Empty when no SMTP intake runs here.
   */
  reportAddresses?: readonly string[];
  /**
   * Which mail intake channels run beside this API (SMTP: REPORTS_DOMAIN; IMAP: IMAP_URL), so that
   * the dashboard does not send people to a mailbox nobody reads. Unset in an API process of its
   * own, which does not know.
   */
  mailIntake?: MailIntake;
  /**
   * The data keys of personal data (docs/privacy.md): uploads seal with them, /forensic opens
   * with them. Every process of the service passes them; without, uploads are stored in clear
   * and sealed fields read as removed.
   */
  dataKeys?: DataKeys;
}

/**
 * What a caller may do: `admin` is held by admin sessions only (managing people and keys is a
 * person's job, never a key's).
 */
export type Capability = Scope | "admin";

/** Who is calling: a key's holder or a signed-in person, always within one tenant. */
export interface Caller {
  tenantId: string;
  capabilities: readonly Capability[];
  /** Who the events this caller appends name: `key:<id>` or `user:<id>`. */
  causedBy: string;
  /** Present when a session cookie authenticated the request. */
  session?: { token: string; session: Session };
}

export interface ApiState {
  requestId: string;
  holder?: Caller;
  /** Why the request could not be authenticated, raised once rate limiting has counted it. */
  authError?: Error;
}

/** The dependencies as handlers see them, with the defaults filled in. */
export type ServedDeps = ApiDeps & { users: UserSettings; webRoot: string | null };

export type ApiContext = ParameterizedContext<ApiState, DefaultContext & { deps: ServedDeps }>;

/** The mail intake channels that run (GET session's `mail_intake`). */
export interface MailIntake {
  smtp: boolean;
  imap: boolean;
}
