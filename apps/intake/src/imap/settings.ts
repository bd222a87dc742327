import { ConfigError, integer, parseSettings, url } from "@dmarc-ledger/config";
import { z } from "zod";
import { filePath, readSettingFile } from "../file-setting.js";

function folder(defaultName: string) {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return defaultName;
      // IMAP mailbox names are sent quoted; control characters cannot be.
      if (value.trim() === "" || /[\u0000-\u001f\u007f]/.test(value)) {
        ctx.addIssue({ code: "custom", message: "is not a usable IMAP folder name" });
        return z.NEVER;
      }
      return value;
    });
}

/** The environment variables of the IMAP intake; the intake is off while IMAP_URL is unset. */
export const imapSettingsShape = {
  IMAP_URL: url(["imap", "imaps"]),
  IMAP_FOLDER: folder("INBOX"),
  IMAP_PROCESSED_FOLDER: folder("DMARC Processed"),
  IMAP_INVALID_FOLDER: folder("DMARC Invalid"),
  IMAP_NOT_REPORT_FOLDER: folder("Not DMARC"),
  IMAP_POLL_INTERVAL_MS: integer({ min: 1000, max: 86_400_000, default: 60_000 }),
  IMAP_MAX_MESSAGE_BYTES: integer({ min: 1024, max: 1024 * 1024 * 1024, default: 50 * 1024 * 1024 }),
  /** PEM certificates to trust for the server besides the system's (a private CA, a self-signed server). */
  IMAP_TLS_CA_FILE: filePath(),
};

export interface ImapConnectionSettings {
  host: string;
  port: number;
  /** imaps://: TLS from the first byte. */
  secure: boolean;
  /**
   * imap:// to any host but loopback: the password must not cross the network in clear, so the
   * connection fails unless the server upgrades with STARTTLS. imap:// to loopback uses STARTTLS
   * when offered.
   */
  requireStartTls: boolean;
  user: string;
  password: string;
  /** Certificates trusted besides the system's (IMAP_TLS_CA_FILE); null for the system's only. */
  ca: Buffer | null;
}

export interface ImapSettings {
  connection: ImapConnectionSettings;
  /** The folder reports arrive in. */
  folder: string;
  processedFolder: string;
  invalidFolder: string;
  notReportFolder: string;
  pollIntervalMs: number;
  maxMessageBytes: number;
}

/** The intake's settings, or null when IMAP_URL is unset (no IMAP intake). Throws ConfigError. */
export function imapSettingsFromEnv(env: NodeJS.ProcessEnv): ImapSettings | null {
  const parsed = parseSettings(imapSettingsShape, env);
  if (parsed.IMAP_URL === undefined) return null;
  const connection = connectionFromUrl(parsed.IMAP_URL);
  if (parsed.IMAP_TLS_CA_FILE !== undefined) {
    const problems: { variable: string; message: string }[] = [];
    connection.ca = readSettingFile("IMAP_TLS_CA_FILE", parsed.IMAP_TLS_CA_FILE, problems);
    if (problems.length > 0) throw new ConfigError(problems);
  }
  const destinations = {
    IMAP_PROCESSED_FOLDER: parsed.IMAP_PROCESSED_FOLDER,
    IMAP_INVALID_FOLDER: parsed.IMAP_INVALID_FOLDER,
    IMAP_NOT_REPORT_FOLDER: parsed.IMAP_NOT_REPORT_FOLDER,
  };
  // Mail moved into the folder it is read from comes back with a new UID, and round it goes.
  const loops = Object.entries(destinations).filter(([, folder]) => folder === parsed.IMAP_FOLDER);
  if (loops.length > 0) {
    throw new ConfigError(
      loops.map(([variable]) => ({
        variable,
        message: `must differ from IMAP_FOLDER ("${parsed.IMAP_FOLDER}")`,
      })),
    );
  }
  return {
    connection,
    folder: parsed.IMAP_FOLDER,
    processedFolder: parsed.IMAP_PROCESSED_FOLDER,
    invalidFolder: parsed.IMAP_INVALID_FOLDER,
    notReportFolder: parsed.IMAP_NOT_REPORT_FOLDER,
    pollIntervalMs: parsed.IMAP_POLL_INTERVAL_MS,
    maxMessageBytes: parsed.IMAP_MAX_MESSAGE_BYTES,
  };
}

/** imap://user:password@host:port/ or imaps://…; user and password percent-encoded. */
export function connectionFromUrl(value: string): ImapConnectionSettings {
  const parsed = new URL(value);
  const secure = parsed.protocol === "imaps:";
  const user = decodeURIComponent(parsed.username);
  if (user === "" || parsed.hostname === "") {
    throw new ConfigError([
      { variable: "IMAP_URL", message: "must name a user and a host: imap://user:password@host:port/" },
    ]);
  }
  const host = parsed.hostname.replace(/^\[(.*)\]$/, "$1");
  return {
    host,
    port: parsed.port === "" ? (secure ? 993 : 143) : Number(parsed.port),
    secure,
    requireStartTls: !secure && !isLoopback(host),
    user,
    password: decodeURIComponent(parsed.password),
    ca: null,
  };
}

/** Where the intake reads, for logs: never the password. */
export function describeImap(settings: ImapSettings): string {
  const { connection } = settings;
  return `${connection.secure ? "imaps" : "imap"}://${connection.user}@${connection.host}:${connection.port}/${settings.folder}`;
}

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}
