import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** 256 random bits, URL-safe: session and set-password tokens. */
export const newToken = () => randomBytes(32).toString("base64url");

/**
 * Tokens carry 256 random bits: a plain SHA-256 keeps them unguessable from the database, and
 * a lookup stays one index probe.
 */
export const tokenHash = (token: string) => createHash("sha256").update(token).digest("hex");

/**
 * The CSRF token of a session: derived from the session token, which only its holder knows, so
 * nothing more is stored and a token never outlives its session.
 */
export const csrfTokenOf = (sessionToken: string) =>
  createHash("sha256").update(`csrf:${sessionToken}`).digest("base64url");

/** Compares in constant time. */
export function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
