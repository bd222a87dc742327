export class UnknownUserError extends Error {
  override readonly name = "UnknownUserError";
}

/** The set-password link is unknown, used already, or expired: which one is not said. */
export class InvalidPasswordLinkError extends Error {
  override readonly name = "InvalidPasswordLinkError";
}

/** An admin would leave the tenant without any admin. */
export class LastAdminError extends Error {
  override readonly name = "LastAdminError";
}
