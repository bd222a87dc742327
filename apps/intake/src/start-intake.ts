import type { AnySchema, Database } from "@dmarc-ledger/db";
import type { EventStore } from "@dmarc-ledger/event-store";
import { defaultParseThreads, type IntakeDeps, receiveInput, startParseWorkers } from "@dmarc-ledger/intake";
import type { IntakeMetrics } from "@dmarc-ledger/intake/metrics";
import { runLeasedJob } from "@dmarc-ledger/projection-engine";
import type { Logger } from "pino";
import { describeImap, type ImapIntake, openImapProgressStore, startImapIntake } from "./imap/index.js";
import type { IntakeChannelSettings } from "./settings.js";
import { type DeliverMessage, type RunningSmtpIntake, startSmtpIntake } from "./smtp/smtp-intake.js";

export interface IntakeAppOptions {
  store: EventStore;
  /** Where the IMAP channel keeps its progress (UIDs handled per folder). */
  database: Database;
  settings: IntakeChannelSettings;
  logger: Logger;
  /** Archive and parser limits for receiveInput (intakeLimits of packages/intake). */
  limits?: Pick<IntakeDeps, "archiveMaxBytes" | "parseOptions" | "parseThreads">;
  /** How a received message is stored; by default receiveInput: archived raw, then parsed. */
  deliver?: DeliverMessage;
  /** Counters of what the channels received, when the process serves metrics. */
  metrics?: IntakeMetrics;
  /** Seals personal data (docs/privacy.md); the processes always pass them. */
  dataKeys?: IntakeDeps["dataKeys"];
}

export interface RunningIntake {
  /** null when the channel is not configured. */
  smtp: RunningSmtpIntake | null;
  imap: ImapIntake | null;
  /** The channels that run, for a start-up line: ["smtp 0.0.0.0:2525"]. */
  channels: string[];
  /** Stops accepting on every channel, finishes the messages in flight, then returns. */
  stop(): Promise<void>;
}

/** Starts the configured intake channels. Several intake processes may run on one store. */
export async function startIntakeApp(options: IntakeAppOptions): Promise<RunningIntake> {
  const { store, settings, logger } = options;
  // Every channel goes through receiveInput: archived raw and committed before it returns, so a
  // channel acknowledges (SMTP 250, IMAP move) only what is durably stored.
  const deliverBy =
    (channel: "smtp" | "imap"): DeliverMessage =>
    async (input, source) => {
      const received = await receiveInput(
        {
          store,
          db: options.database.db,
          ...options.limits,
          metrics: options.metrics,
          dataKeys: options.dataKeys,
        },
        input,
        { channel, source, metadata: { causedBy: `process:${channel}`, correlationId: source } },
      );
      return { source, items: received.items, lastPosition: received.lastPosition };
    };
  const stopTellingWorkerFailures =
    settings.smtp || settings.imap
      ? startParseWorkers(options.limits?.parseThreads ?? defaultParseThreads, (reason) => {
          options.metrics?.parseWorkerFailures.inc();
          logger.warn({ reason }, "parse worker failed; inputs are parsed on the event loop");
        })
      : () => {};
  const smtp = settings.smtp
    ? await startSmtpIntake({
        settings: settings.smtp,
        deliver: options.deliver ?? deliverBy("smtp"),
        logger: logger.child({ channel: "smtp" }),
      })
    : null;
  let imap: ImapIntake | null = null;
  try {
    if (settings.imap) {
      const imapSettings = settings.imap;
      const progress = await openImapProgressStore(options.database);
      const startImap = () =>
        startImapIntake({
          settings: imapSettings,
          deliver: options.deliver ?? deliverBy("imap"),
          progress,
          logger: logger.child({ channel: "imap" }),
        });
      // On PostgreSQL several intake processes may share the mailbox's settings: one of them
      // reads it at a time (its lease, job:imap:<mailbox>), another takes over when it dies.
      // Two readers would store nothing twice, but would race to move the same messages.
      imap = options.database.concurrentSessions
        ? runLeasedJob({
            db: options.database.withSchema<AnySchema>(),
            name: `imap:${describeImap(imapSettings)}`,
            start: () => {
              const started = startImap();
              started.catch((error) => logger.error({ err: error }, "the IMAP intake did not start"));
              return { stop: async () => (await started).stop() };
            },
            onError: (error) =>
              logger.error({ err: error }, "renewing the IMAP reader's lease failed; retrying"),
            onRunning: (running) =>
              logger.info(
                { channel: "imap" },
                running
                  ? "reading the mailbox (this process holds its lease)"
                  : "no longer reading the mailbox",
              ),
          })
        : await startImap();
    }
  } catch (error) {
    await smtp?.stop();
    stopTellingWorkerFailures();
    throw error;
  }
  const channels = [
    ...(smtp ? [`smtp ${smtp.host}:${smtp.port}`] : []),
    ...(settings.imap ? [`imap ${describeImap(settings.imap)}`] : []),
  ];
  return {
    smtp,
    imap,
    channels,
    async stop() {
      await Promise.all([smtp?.stop(), imap?.stop()]);
      stopTellingWorkerFailures();
    },
  };
}
