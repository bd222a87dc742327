import { parseSettings, url } from "@dmarc-ledger/config";
import { z } from "zod";

/** A NATS subject token or a stream name: letters, digits, `-` and `_` (no dot, no wildcard). */
const token = (fallback: string) =>
  z
    .string()
    .optional()
    .transform((value) => value ?? fallback)
    .pipe(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1 to 64 letters, digits, - or _"));

/** The events broker's environment variables (docs/operations.md, "Settings"). */
export const eventBrokerSettingsShape = {
  /** Publish every tenant event to NATS JetStream there (nats://host:port); unset: no broker. */
  EVENTS_NATS_URL: url(["nats", "tls"]),
  /** Subjects are `<prefix>.<tenant>.<type>`. */
  EVENTS_NATS_SUBJECT_PREFIX: token("dmarc-ledger"),
  /** The JetStream stream that captures `<prefix>.>`, created with limits when missing. */
  EVENTS_NATS_STREAM: token("DMARC_LEDGER_EVENTS"),
};

export interface EventBrokerSettings {
  url: string;
  subjectPrefix: string;
  stream: string;
}

/** The broker's settings, or null when EVENTS_NATS_URL is unset. */
export function eventBrokerSettingsFromEnv(env: NodeJS.ProcessEnv): EventBrokerSettings | null {
  const parsed = parseSettings(eventBrokerSettingsShape, env);
  if (!parsed.EVENTS_NATS_URL) return null;
  return {
    url: parsed.EVENTS_NATS_URL,
    subjectPrefix: parsed.EVENTS_NATS_SUBJECT_PREFIX,
    stream: parsed.EVENTS_NATS_STREAM,
  };
}
