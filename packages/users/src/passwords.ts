import { hash, verify } from "@node-rs/argon2";
import { isCommonPassword } from "./common-passwords.js";

export class WeakPasswordError extends Error {
  override readonly name = "WeakPasswordError";
}

export const minPasswordLength = 12;
/** Longer input only costs the hash time; no password manager makes more. */
export const maxPasswordLength = 256;

/**
 * NIST SP 800-63B's rules: length makes a password strong (composition rules only make them
 * predictable), and a password a guesser tries first is refused whatever its length.
 */
export function checkPasswordRules(password: string): void {
  if (password.trim() === "") {
    throw new WeakPasswordError(
      "A password cannot be only spaces: choose one with words or characters in it.",
    );
  }
  if ([...password].length < minPasswordLength) {
    throw new WeakPasswordError(`A password needs at least ${minPasswordLength} characters.`);
  }
  if (password.length > maxPasswordLength) {
    throw new WeakPasswordError(`A password has at most ${maxPasswordLength} characters.`);
  }
  if (isCommonPassword(password)) {
    throw new WeakPasswordError(
      "This password is on the list of common and breached passwords that guessers try first: choose another.",
    );
  }
}

/**
 * argon2id, the library's default, with its default cost (19 MiB, 2 passes, 1 lane): OWASP's
 * recommended minimum, about 50 ms here. The PHC string names them, so they can rise later.
 */
export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

export async function passwordMatches(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    // A hash this version cannot read matches nothing.
    return false;
  }
}

let decoy: Promise<string> | undefined;

/**
 * Checks the password against a hash no password matches, so that an unknown address costs the
 * same time as a wrong password: the answer's timing does not tell whether the account exists.
 */
export async function spendPasswordCheck(password: string): Promise<false> {
  decoy ??= hashPassword(`decoy-${Math.random()}`);
  await passwordMatches(await decoy, password);
  return false;
}
