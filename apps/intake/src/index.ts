export {
  type IntakeChannelSettings,
  intakeChannelSettingsFromEnv,
  intakeChannelSettingsShape,
} from "./settings.js";
export type { DeliverMessage, RunningSmtpIntake } from "./smtp/smtp-intake.js";
export { type SmtpSettings, smtpSettingsFromEnv, smtpSettingsShape } from "./smtp/smtp-settings.js";
export { type IntakeAppOptions, type RunningIntake, startIntakeApp } from "./start-intake.js";
