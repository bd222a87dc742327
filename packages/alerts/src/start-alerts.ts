import type { EventStore } from "@dmarc-ledger/event-store";
import type { DataKeys } from "@dmarc-ledger/personal-data";
import { runLeasedJob, startProjector } from "@dmarc-ledger/projection-engine";
import type { Kysely } from "kysely";
import { alertEvaluator } from "./alert-evaluator.js";
import { startDeliveryWorker } from "./delivery-worker.js";
import { scheduleDigests } from "./digest.js";
import { checkDomainsDns, type DnsStatusChecker } from "./dns-watch.js";
import { startEmailWorker } from "./email-worker.js";
import { noticeSkippedFindings, sendFindings } from "./findings.js";
import { decideUnnamedSenders } from "./new-senders.js";
import { publishAlerts } from "./publisher.js";
import type { AlertsSchema } from "./schema.js";
import type { AlertsSettings } from "./settings.js";
import { checkSilentDomains } from "./silent-domains.js";
import { sealClearWebhookSecrets } from "./webhook-secrets.js";

export interface AlertsOptions {
  store: EventStore;
  // biome-ignore lint/suspicious/noExplicitAny: the process's one handle, seen through the alerts' tables
  db: Kysely<any>;
  settings: AlertsSettings;
  /** Opens the people's addresses the mails go to (sealed: docs/privacy.md, "People"). */
  dataKeys: DataKeys;
  onError?: (error: unknown, what: string) => void;
  /** The onboarding check from live DNS (packages/onboarding); without it, no DNS watch. */
  checkDomainStatus?: DnsStatusChecker;
  /** How often the outbox is looked at for alerts to publish. */
  publishPollMs?: number;
  /** This process's name for the job leases; unique by default. */
  owner?: string;
  /** How long the job leases last unrenewed (5 s): how soon another process takes a dead one's jobs. */
  leaseTtlMs?: number;
  /** The alerts' clock (tests move it): which report days are inside the rules' windows, and "so far". */
  now?: () => Date;
  /** Told when this process starts (true) or stops (false) running one of the leased jobs. */
  onRunning?: (job: AlertsJob, running: boolean) => void;
}

/** The alerts' jobs that run once per deployment, by their leases (`job:<name>`). */
export type AlertsJob = "alert_evaluator" | "alert_schedule";

export interface RunningAlerts {
  /** The leased jobs this process runs now. */
  jobs(): AlertsJob[];
  stop(): Promise<void>;
}

/**
 * The alerts beside the projector: the evaluator (its own projector over the event store) and the
 * periodic checks, each in one process of the deployment at a time (job leases); the publisher
 * (outbox to AlertRaised and deliveries) and the webhook and mail workers, in every process.
 */
export function startAlerts(options: AlertsOptions): RunningAlerts {
  const { store, settings } = options;
  const db: Kysely<AlertsSchema> = options.db;
  const onError = (what: string) => (error: unknown) => options.onError?.(error, what);
  const now = options.now ?? (() => new Date());
  const leased = (name: AlertsJob, start: () => { stop(): Promise<void> }) =>
    runLeasedJob({
      db: options.db,
      name,
      start,
      ...(options.owner ? { owner: options.owner } : {}),
      ...(options.leaseTtlMs ? { leaseTtlMs: options.leaseTtlMs } : {}),
      onError: onError(`renewing the lease of ${name} failed; retrying`),
      onRunning: (running) => options.onRunning?.(name, running),
    });
  // One evaluator per deployment. Two at once (a paused holder's lease run out) would still
  // decide each batch once: a batch locks the evaluator's checkpoint row and skips what is behind it.
  const evaluator = leased("alert_evaluator", () =>
    startProjector({
      store,
      db: options.db,
      projections: [
        alertEvaluator({
          maxEventAgeMs: settings.ALERT_MAX_EVENT_AGE,
          nameWaitMs: settings.ALERT_NAME_WAIT,
          now,
        }),
      ],
      onError: onError("alert evaluation failed; retrying from its checkpoint"),
    }),
  );
  // Secrets kept in clear by an earlier version: sealed before the first delivery needs them (it
  // opens either kind, so a failure here only leaves them to the next start).
  void sealClearWebhookSecrets(db, options.dataKeys).catch(onError("sealing the webhook secrets failed"));
  const deliveries = startDeliveryWorker({
    store,
    db,
    keys: options.dataKeys,
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
        dataKeys: options.dataKeys,
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
        // Settled findings become alerts in the outbox, published below in the same round.
        const settled = { now: now(), settleMs: settings.ALERT_SETTLE };
        await sendFindings(db, settled);
        await noticeSkippedFindings(db, settled);
        published = await publishAlerts(store, db, settings.ALERT_SMTP_URL !== undefined);
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
  // The periodic checks, once per deployment: each is safe twice (the alerts' ids, the digests'
  // keys, the DNS state's row lock), but a DNS round over every domain in every process is waste.
  const schedule = leased("alert_schedule", () =>
    startSchedule(db, settings, options, onError, () => mail?.wake()),
  );

  return {
    jobs: () => [
      ...(evaluator.running() ? (["alert_evaluator"] as const) : []),
      ...(schedule.running() ? (["alert_schedule"] as const) : []),
    ],
    async stop() {
      stopping = true;
      await schedule.stop();
      (sleeping as (() => void) | null)?.();
      await publisher;
      await evaluator.stop();
      await deliveries.stop();
      await mail?.stop();
    },
  };
}

/**
 * The periodic work: the silent-domain check (no_reports), new senders that waited too long for a
 * name, the digests every ALERT_CHECK_INTERVAL; the DNS watch every ALERT_DNS_CHECK_INTERVAL. Each
 * runs one round at a time (a round over many domains may outlast its interval); stopping waits
 * for the rounds in hand.
 */
function startSchedule(
  db: Kysely<AlertsSchema>,
  settings: AlertsSettings,
  options: AlertsOptions,
  onError: (what: string) => (error: unknown) => void,
  wakeMail: () => void,
): { stop(): Promise<void> } {
  const rounds = new Set<Promise<unknown>>();
  const once = (busy: { running: boolean }, round: () => Promise<unknown>) => () => {
    if (busy.running) return;
    busy.running = true;
    const running = round().finally(() => {
      busy.running = false;
      rounds.delete(running);
    });
    rounds.add(running);
  };
  const periodic = once({ running: false }, async () => {
    await checkSilentDomains(db).catch(onError("the silent-domain check failed"));
    await decideUnnamedSenders(db, {
      nameWaitMs: settings.ALERT_NAME_WAIT,
      maxEventAgeMs: settings.ALERT_MAX_EVENT_AGE,
      now: (options.now ?? (() => new Date()))(),
    }).catch(onError("deciding the new senders that were not named failed"));
    if (settings.ALERT_SMTP_URL && settings.ALERT_DIGEST !== "off") {
      await scheduleDigests(db, settings.ALERT_DIGEST)
        .then((made) => {
          if (made > 0) wakeMail();
        })
        .catch(onError("making the digests failed"));
    }
  });
  const timers = [setInterval(periodic, settings.ALERT_CHECK_INTERVAL)];
  const check = options.checkDomainStatus;
  if (check) {
    const dnsRound = once({ running: false }, () =>
      checkDomainsDns(db, check).catch(onError("the DNS check of the domains failed")),
    );
    timers.push(setInterval(dnsRound, settings.ALERT_DNS_CHECK_INTERVAL));
  }
  for (const timer of timers) timer.unref();
  return {
    async stop() {
      for (const timer of timers) clearInterval(timer);
      await Promise.all(rounds);
    },
  };
}
