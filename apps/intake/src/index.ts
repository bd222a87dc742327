export { type IngestSettings, ingestSettingsFromEnv, ingestSettingsShape } from "./settings.js";
export type { DeliverMessage, RunningSmtpIntake } from "./smtp/smtp-intake.js";
export { type SmtpSettings, smtpSettingsFromEnv, smtpSettingsShape } from "./smtp/smtp-settings.js";
export { type IngestOptions, type RunningIngest, startIngest } from "./start-ingest.js";
