import { ConfigError, duration, parseSettings } from "@dmarc-ledger/config";

const minute = 60_000;
const hour = 60 * minute;
const day = 24 * hour;

export const userSettingsShape = {
  /** A session unused this long ends. */
  SESSION_IDLE_TIMEOUT: duration({ minMs: minute, maxMs: 30 * day, defaultMs: 2 * hour }),
  /** A session ends this long after its sign-in, however active. */
  SESSION_ABSOLUTE_TIMEOUT: duration({ minMs: 5 * minute, maxMs: 90 * day, defaultMs: day }),
  /** How long a set-password link works. */
  SET_PASSWORD_LINK_TTL: duration({ minMs: 5 * minute, maxMs: 30 * day, defaultMs: 72 * hour }),
};

export interface UserSettings {
  sessionIdleMs: number;
  sessionAbsoluteMs: number;
  passwordLinkTtlMs: number;
}

export const defaultUserSettings: UserSettings = {
  sessionIdleMs: 2 * hour,
  sessionAbsoluteMs: day,
  passwordLinkTtlMs: 72 * hour,
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
  };
}
