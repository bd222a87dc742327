export class InvalidEmailError extends Error {
  override readonly name = "InvalidEmailError";
}

/**
 * An address as users are told apart: trimmed and lower-cased (the local part is case-sensitive
 * in theory, never in practice, and two accounts differing by case would be a trap). A host
 * without a dot (admin@localhost) is allowed: the first start's admin has one.
 */
export function normaliseEmail(raw: string): string {
  const email = raw.trim().toLowerCase();
  if (
    email.length > 254 ||
    !/^[^\s@<>()[\]\\,;:"]+@[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(email)
  ) {
    throw new InvalidEmailError(`"${raw.slice(0, 100)}" is not an e-mail address.`);
  }
  return email;
}
