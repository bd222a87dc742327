import { type SmtpSettings, smtpSettingsFromEnv, smtpSettingsShape } from "./smtp/smtp-settings.js";

/** Every environment variable the intake channels read, by name, for a process to compose. */
export const ingestSettingsShape = { ...smtpSettingsShape };

export interface IngestSettings {
  /** null: the SMTP channel is off (REPORTS_DOMAIN unset). */
  smtp: SmtpSettings | null;
}

/** Checks every intake variable at once; throws a ConfigError naming each wrong one. */
export function ingestSettingsFromEnv(env: NodeJS.ProcessEnv): IngestSettings {
  return { smtp: smtpSettingsFromEnv(env) };
}
