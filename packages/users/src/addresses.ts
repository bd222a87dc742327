import { type Personal, streams } from "@dmarc-ledger/events";
import { BlindIndex, type DataKeys, type KeysHandle, personScope } from "@dmarc-ledger/personal-data";

/**
 * A person's address is stored sealed under their own data key (scope `user:<id>`), and found by
 * its blind index: nowhere in the database, the events or the stream names in clear
 * (docs/privacy.md, "People").
 */
const indexes = new WeakMap<DataKeys, BlindIndex>();

/** The blind index of a normalised address: HMAC-SHA256 under a key derived from a data key. */
export function emailIndex(handle: KeysHandle, keys: DataKeys, email: string): Promise<string> {
  let index = indexes.get(keys);
  if (!index) {
    index = new BlindIndex(keys, "user email index v1");
    indexes.set(keys, index);
  }
  return index.of(handle, email);
}

/** The streams an address's user may be on: today's (by blind index), and the one of versions before. */
export async function userStreamsOf(
  handle: KeysHandle,
  keys: DataKeys,
  email: string,
): Promise<{ current: string; legacy: string }> {
  return { current: streams.user(await emailIndex(handle, keys, email)), legacy: streams.legacyUser(email) };
}

/** Seals an address under its person's key (made now). */
export async function sealEmail(
  handle: KeysHandle,
  keys: DataKeys,
  userId: string,
  email: string,
  at: Date,
): Promise<Personal<string>> {
  return { sealed: await keys.seal(handle, personScope(userId), at, email) };
}

/**
 * The addresses of stored envelopes (user_account.sealed_email, JSON), in order: null where the
 * person's key was shredded.
 */
export function openEmails(
  handle: KeysHandle,
  keys: DataKeys,
  envelopes: readonly (string | Personal<string>)[],
): Promise<(string | null)[]> {
  return keys.open<string>(
    handle,
    envelopes.map((envelope) =>
      typeof envelope === "string" ? (JSON.parse(envelope) as Personal<string>) : envelope,
    ),
  );
}
