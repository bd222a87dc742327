import type { EventStore } from "@dmarc-ledger/event-store";
import { startProjector } from "@dmarc-ledger/projection-engine";
import type { Kysely } from "kysely";
import { alertEvaluator } from "./alert-evaluator.js";
import { startDeliveryWorker } from "./delivery-worker.js";
import { scheduleDigests } from "./digest.js";
import { checkDomainsDns, type DnsStatusChecker } from "./dns-watch.js";
import { startEmailWorker } from "./email-worker.js";
import { publishAlerts } from "./publisher.js";
import type { AlertsSchema } from "./schema.js";
import type { AlertsSettings } from "./settings.js";
import { checkSilentDomains } from "./silent-domains.js";

export interface AlertsOptions {
  store: EventStore;
  // biome-ignore lint/suspicious/noExplicitAny: the process's one handle, seen through the alerts' tables
  db: Kysely<any>;
  settings: AlertsSettings;
  onError?: (error: unknown, what: string) => void;
  /** The onboarding check from live DNS (packages/onboarding); without it, no DNS watch. */
  checkDomainStatus?: DnsStatusChecker;
  /** How often the outbox is looked at for alerts to publish. */
  publishPollMs?: number;
}

export interface RunningAlerts {
  stop(): Promise<void>;
}

/**
 * The alerts beside the projector: the evaluator (its own projector over the event store), the
 * publisher (outbox to AlertRaised and deliveries), the webhook and mail workers, and the
 * periodic check of silent domains.
 */
export function startAlerts(options: AlertsOptions): RunningAlerts {
  const { store, settings } = options;
  const db: Kysely<AlertsSchema> = options.db;
  const onError = (what: string) => (error: unknown) => options.onError?.(error, what);
  const evaluator = startProjector({
    store,
    db: options.db,
    projections: [alertEvaluator({ maxEventAgeMs: settings.ALERT_MAX_EVENT_AGE })],
    onError: onError("alert evaluation failed; retrying from its checkpoint"),
  });
  const deliveries = startDeliveryWorker({
    store,
    db,
    limits: {
      timeoutMs: settings.WEBHOOK_TIMEOUT,
      maxResponseBytes: settings.WEBHOOK_MAX_RESPONSE_BYTES,
      allowPrivate: settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES === "yes",
    },
    concurrency: settings.WEBHOOK_CONCURRENCY,
    retryBaseMs: settings.WEBHOOK_RETRY_BASE,
    retryMaxMs: settings.WEBHOOK_RETRY_MAX,
    retryForMs: settings.WEBHOOK_RETRY_FOR,
    onError: onError("a webhook delivery failed unexpectedly"),
  });
  const mail = settings.ALERT_SMTP_URL
    ? startEmailWorker({
        db,
        smtpUrl: settings.ALERT_SMTP_URL,
        from: settings.ALERT_MAIL_FROM,
        retryBaseMs: settings.WEBHOOK_RETRY_BASE,
        retryMaxMs: settings.WEBHOOK_RETRY_MAX,
        timeoutMs: settings.WEBHOOK_TIMEOUT,
        onError: onError("sending alert mail failed unexpectedly"),
      })
    : null;

  let stopping = false;
  let sleeping: (() => void) | null = null;
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      sleeping = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const publisher = (async () => {
    while (!stopping) {
      let published = 0;
      try {
        published = await publishAlerts(store, db);
        if (published > 0) {
          deliveries.wake();
          mail?.wake();
        }
      } catch (error) {
        onError("publishing alerts failed; retrying")(error);
      }
      if (published === 0 && !stopping) await pause(options.publishPollMs ?? 100);
    }
  })();
  const digestKind = settings.ALERT_DIGEST;
  const periodic = () => {
    checkSilentDomains(db).catch(onError("the silent-domain check failed"));
    if (mail && digestKind !== "off") {
      scheduleDigests(db, digestKind)
        .then((made) => {
          if (made > 0) mail.wake();
        })
        .catch(onError("making the digests failed"));
    }
  };
  const silentCheck = setInterval(periodic, settings.ALERT_CHECK_INTERVAL);
  silentCheck.unref();
  let dnsRunning = false;
  const dnsWatch = options.checkDomainStatus
    ? setInterval(() => {
        // One round at a time: a round over many domains may outlast the interval.
        if (dnsRunning) return;
        dnsRunning = true;
        checkDomainsDns(db, options.checkDomainStatus!)
          .catch(onError("the DNS check of the domains failed"))
          .finally(() => {
            dnsRunning = false;
          });
      }, settings.ALERT_DNS_CHECK_INTERVAL)
    : null;
  dnsWatch?.unref();

  return {
    async stop() {
      stopping = true;
      clearInterval(silentCheck);
      if (dnsWatch) clearInterval(dnsWatch);
      (sleeping as (() => void) | null)?.();
      await publisher;
      await evaluator.stop();
      await deliveries.stop();
      await mail?.stop();
    },
  };
}
