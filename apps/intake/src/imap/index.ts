export { classifyOutcome, type MessageDisposition } from "./classify.js";
export {
  type DeliverInput,
  type HandledMessage,
  type ImapIntake,
  type ImapIntakeOptions,
  startImapIntake,
} from "./intake.js";
export { imapProgressMigrations } from "./migrations/index.js";
export { type FolderProgress, type ImapProgressStore, openImapProgressStore } from "./progress.js";
export {
  connectionFromUrl,
  describeImap,
  type ImapConnectionSettings,
  type ImapSettings,
  imapSettingsFromEnv,
  imapSettingsShape,
} from "./settings.js";
