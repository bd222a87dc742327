import { createHash, randomBytes } from "node:crypto";
import type { Region, Scope } from "@dmarc-ledger/events";

export const allScopes: readonly Scope[] = ["read", "write", "ingest"];

/**
 * A key reads `dlk_<region>_<43 base64url characters>`: 256 random bits, with the region in a
 * readable prefix so that a key sent to the wrong region can be told apart from an unknown one.
 */
const keyPattern = /^dlk_(global|eu)_[A-Za-z0-9_-]{43}$/;

export interface IssuedKey {
  key: string;
  keyId: string;
  keyHash: string;
  keyPrefix: string;
}

export function generateApiKey(region: Region): IssuedKey {
  const key = `dlk_${region}_${randomBytes(32).toString("base64url")}`;
  return {
    key,
    keyId: randomBytes(8).toString("hex"),
    keyHash: hashApiKey(key),
    keyPrefix: key.slice(0, `dlk_${region}_`.length + 6),
  };
}

/**
 * Keys carry 256 random bits, so a plain SHA-256 is enough: there is nothing to brute-force that a
 * slow, salted hash would protect, and a fast hash keeps authentication a single index lookup.
 */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** The region a key says it belongs to, or null when it is not shaped like one of our keys. */
export function regionOfKey(key: string): Region | null {
  const match = keyPattern.exec(key);
  return match ? (match[1] as Region) : null;
}
