import { type ImapSettings, imapSettingsFromEnv, imapSettingsShape } from "./imap/settings.js";
import { type SmtpSettings, smtpSettingsFromEnv, smtpSettingsShape } from "./smtp/smtp-settings.js";

/** Every environment variable the intake channels read, by name, for a process to compose. */
export const intakeChannelSettingsShape = { ...smtpSettingsShape, ...imapSettingsShape };

export interface IntakeChannelSettings {
  /** null: the SMTP channel is off (REPORTS_DOMAIN unset). */
  smtp: SmtpSettings | null;
  /** null: the IMAP channel is off (IMAP_URL unset). */
  imap: ImapSettings | null;
}

/** Checks every intake variable; throws a ConfigError naming each wrong one. */
export function intakeChannelSettingsFromEnv(env: NodeJS.ProcessEnv): IntakeChannelSettings {
  return { smtp: smtpSettingsFromEnv(env), imap: imapSettingsFromEnv(env) };
}
