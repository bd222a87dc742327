import { ConfigError, integer, parseSettings, port } from "@dmarc-ledger/config";
import { z } from "zod";
import { filePath, readSettingFile } from "../file-setting.js";

const hostnamePattern =
  /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;
const localPartPattern = /^[a-z0-9!#$%&'*+/=?^_`{|}~.-]{1,64}$/;

/** The domain of the report addresses; unset means no SMTP channel (there is no sensible default). */
function reportsDomain() {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return undefined;
      const domain = value.trim().toLowerCase().replace(/\.$/, "");
      if (!hostnamePattern.test(domain)) {
        ctx.addIssue({ code: "custom", message: `"${value}" is not a domain name` });
        return z.NEVER;
      }
      return domain;
    });
}

/** Local parts, comma separated: "rua,ruf". */
function localParts(defaultValue: string[]) {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return defaultValue;
      const parts = value
        .split(",")
        .map((part) => part.trim().toLowerCase())
        .filter(Boolean);
      const bad = parts.filter((part) => !localPartPattern.test(part));
      if (parts.length === 0 || bad.length > 0) {
        ctx.addIssue({
          code: "custom",
          message: `"${value}" is not a comma-separated list of address local parts (e.g. rua,ruf)`,
        });
        return z.NEVER;
      }
      return [...new Set(parts)];
    });
}

/** The environment variables of the SMTP channel, by name (see docs/intake.md). */
export const smtpSettingsShape = {
  REPORTS_DOMAIN: reportsDomain(),
  REPORT_ADDRESSES: localParts(["rua", "ruf"]),
  SMTP_PORT: port(2525),
  SMTP_HOST: z
    .string()
    .optional()
    .transform((value) => value?.trim() || "0.0.0.0"),
  SMTP_MAX_MESSAGE_BYTES: integer({ min: 1024, max: 1024 * 1024 * 1024, default: 25 * 1024 * 1024 }),
  SMTP_MAX_CONNECTIONS: integer({ min: 1, max: 100_000, default: 200 }),
  SMTP_MAX_CONNECTIONS_PER_IP: integer({ min: 1, max: 10_000, default: 10 }),
  SMTP_MAX_RECIPIENTS: integer({ min: 1, max: 1000, default: 20 }),
  SMTP_MAX_CONCURRENT_DELIVERIES: integer({ min: 1, max: 64, default: 4 }),
  SMTP_SOCKET_TIMEOUT_MS: integer({ min: 1000, max: 3_600_000, default: 60_000 }),
  SMTP_DATA_TIMEOUT_MS: integer({ min: 1000, max: 3_600_000, default: 600_000 }),
  SMTP_CLOSE_TIMEOUT_MS: integer({ min: 0, max: 600_000, default: 30_000 }),
  SMTP_TLS_CERT: filePath(),
  SMTP_TLS_KEY: filePath(),
  SMTP_SPOOL_DIR: filePath(),
};

export type SmtpEnvironment = ReturnType<typeof parseSmtpEnvironment>;

function parseSmtpEnvironment(env: NodeJS.ProcessEnv) {
  return parseSettings(smtpSettingsShape, env);
}

export interface SmtpTls {
  cert: Buffer;
  key: Buffer;
}

/** What the SMTP server needs, checked: null when REPORTS_DOMAIN is unset (the channel is off). */
export interface SmtpSettings {
  reportsDomain: string;
  /** Full addresses, lower case: "rua@reports.example.com". */
  reportAddresses: string[];
  host: string;
  /** 0 asks the system for a free port. */
  port: number;
  maxMessageBytes: number;
  maxConnections: number;
  maxConnectionsPerIp: number;
  maxRecipients: number;
  /** Messages being stored at once by this process; the others wait in the spool. */
  maxConcurrentDeliveries: number;
  socketTimeoutMs: number;
  /** The whole DATA phase of one message, however the client trickles it. */
  dataTimeoutMs: number;
  /** On stop: how long messages being received may take to finish. */
  closeTimeoutMs: number;
  tls: SmtpTls | null;
  /** Where messages wait between DATA and storage; a fresh directory under the system's temp by default. */
  spoolDir: string | undefined;
}

export function smtpSettingsFromEnv(env: NodeJS.ProcessEnv): SmtpSettings | null {
  const parsed = parseSmtpEnvironment(env);
  const tls = readTls(parsed.SMTP_TLS_CERT, parsed.SMTP_TLS_KEY);
  if (parsed.REPORTS_DOMAIN === undefined) return null;
  return {
    reportsDomain: parsed.REPORTS_DOMAIN,
    reportAddresses: parsed.REPORT_ADDRESSES.map((local) => `${local}@${parsed.REPORTS_DOMAIN}`),
    host: parsed.SMTP_HOST,
    port: parsed.SMTP_PORT,
    maxMessageBytes: parsed.SMTP_MAX_MESSAGE_BYTES,
    maxConnections: parsed.SMTP_MAX_CONNECTIONS,
    maxConnectionsPerIp: parsed.SMTP_MAX_CONNECTIONS_PER_IP,
    maxRecipients: parsed.SMTP_MAX_RECIPIENTS,
    maxConcurrentDeliveries: parsed.SMTP_MAX_CONCURRENT_DELIVERIES,
    socketTimeoutMs: parsed.SMTP_SOCKET_TIMEOUT_MS,
    dataTimeoutMs: parsed.SMTP_DATA_TIMEOUT_MS,
    closeTimeoutMs: parsed.SMTP_CLOSE_TIMEOUT_MS,
    tls,
    spoolDir: parsed.SMTP_SPOOL_DIR,
  };
}

/** Both files or neither; read now, so that a wrong path stops the process before it listens. */
function readTls(certPath: string | undefined, keyPath: string | undefined): SmtpTls | null {
  if (certPath === undefined && keyPath === undefined) return null;
  const problems: { variable: string; message: string }[] = [];
  if (certPath === undefined)
    problems.push({ variable: "SMTP_TLS_CERT", message: "must be set when SMTP_TLS_KEY is" });
  if (keyPath === undefined)
    problems.push({ variable: "SMTP_TLS_KEY", message: "must be set when SMTP_TLS_CERT is" });
  const read = (variable: string, path: string | undefined) =>
    path === undefined ? null : readSettingFile(variable, path, problems);
  const cert = read("SMTP_TLS_CERT", certPath);
  const key = read("SMTP_TLS_KEY", keyPath);
  if (problems.length > 0 || !cert || !key) throw new ConfigError(problems);
  return { cert, key };
}
