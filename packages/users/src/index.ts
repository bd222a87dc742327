export {
  type AddedUser,
  addUser,
  changeRole,
  findUserId,
  issuePasswordLink,
  type PasswordLink,
  removeTenantPeople,
  removeUser,
  setPassword,
  setPasswordUrl,
} from "./commands.js";
export { InvalidEmailError, normaliseEmail } from "./email.js";
export { InvalidPasswordLinkError, LastAdminError, UnknownUserError } from "./errors.js";
export { usersMigrations } from "./migrations/index.js";
export { minPasswordLength, WeakPasswordError } from "./passwords.js";
export { usersProjection, usersProjections } from "./projection.js";
export {
  type ActivityRecord,
  listTenantUsers,
  type TenantUser,
  tenantActivity,
  userEmails,
} from "./queries.js";
export type { UsersSchema } from "./schema.js";
export { findSession, type Session, type SignInOutcome, signIn, signOut } from "./sessions.js";
export {
  defaultUserSettings,
  type UserSettings,
  userSettingsFromEnv,
  userSettingsShape,
} from "./settings.js";
export {
  addressWindowMs,
  firstPairDelayMs,
  freeFailuresPerPair,
  maxFailuresPerAccount,
  maxFailuresPerAddress,
  maxPairDelayMs,
  pairDelayMs,
} from "./throttle.js";
export { csrfTokenOf, sameToken } from "./tokens.js";
