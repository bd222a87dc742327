import { ConfigError, duration, parseSettings } from "@dmarc-ledger/config";
import { z } from "zod";
import { InvalidEmailError, normaliseEmail } from "./email.js";

const minute = 60_000;
const hour = 60 * minute;
const day = 24 * hour;

function email(defaultEmail: string) {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      try {
        return normaliseEmail(value ?? defaultEmail);
      } catch (error) {
        if (!(error instanceof InvalidEmailError)) throw error;
        ctx.addIssue({ code: "custom", message: `"${value}" is not an e-mail address` });
        return z.NEVER;
      }
    });
}

export const userSettingsShape = {
  /** A session unused this long ends. */
  SESSION_IDLE_TIMEOUT: duration({ minMs: minute, maxMs: 30 * day, defaultMs: 2 * hour }),
  /** A session ends this long after its sign-in, however active. */
  SESSION_ABSOLUTE_TIMEOUT: duration({ minMs: 5 * minute, maxMs: 90 * day, defaultMs: day }),
  /** How long a set-password link works. */
  SET_PASSWORD_LINK_TTL: duration({ minMs: 5 * minute, maxMs: 30 * day, defaultMs: 72 * hour }),
  /** The address of the default tenant's first admin, made on the service's first start. */
  ADMIN_EMAIL: email("admin@localhost"),
};

export interface UserSettings {
  sessionIdleMs: number;
  sessionAbsoluteMs: number;
  passwordLinkTtlMs: number;
  firstAdminEmail: string;
}

export const defaultUserSettings: UserSettings = {
  sessionIdleMs: 2 * hour,
  sessionAbsoluteMs: day,
  passwordLinkTtlMs: 72 * hour,
  firstAdminEmail: "admin@localhost",
};

/** ConfigError names each wrong variable. */
export function userSettingsFromEnv(env: NodeJS.ProcessEnv): UserSettings {
  const parsed = parseSettings(userSettingsShape, env);
  if (parsed.SESSION_IDLE_TIMEOUT > parsed.SESSION_ABSOLUTE_TIMEOUT) {
    throw new ConfigError([
      { variable: "SESSION_IDLE_TIMEOUT", message: "must not be longer than SESSION_ABSOLUTE_TIMEOUT" },
    ]);
  }
  return {
    sessionIdleMs: parsed.SESSION_IDLE_TIMEOUT,
    sessionAbsoluteMs: parsed.SESSION_ABSOLUTE_TIMEOUT,
    passwordLinkTtlMs: parsed.SET_PASSWORD_LINK_TTL,
    firstAdminEmail: parsed.ADMIN_EMAIL,
  };
}
