import { createHmac, hkdfSync } from "node:crypto";
import type { DataKeys, KeysHandle } from "./data-keys.js";

/**
 * The key scope of one person of the dashboard: their address is sealed under it, and removing
 * their account shreds it (docs/privacy.md, "People").
 */
export const personScope = (userId: string) => `user:${userId}`;

/** The scope whose monthless key is the secret of the people's blind index (BlindIndex). */
export const peopleIndexScope = "index:people";

/** A scope of people's keys or index secrets: never shredded by retention. */
export const isPeopleScope = (scope: string) => scope.startsWith("user:") || scope.startsWith("index:");

/**
 * A blind index: an HMAC-SHA256 of a value under a key derived (HKDF-SHA256) from a secret data
 * key, so that a row or a stream can be found by the value without holding it. Someone with the
 * database alone learns nothing from it; someone with the master key too can test a guess (which
 * address had an account), never read one. The secret is a data key row (scope
 * peopleIndexScope, month `-`): rotating MASTER_KEY rewraps it and every index stays valid.
 */
export class BlindIndex {
  /**
   * The derived key, once read: the secret is never shredded and a rotation keeps its bytes, so
   * a sign-in costs no query for it (a failed read is tried again next time).
   */
  private key: Promise<Buffer> | null = null;

  constructor(
    private readonly keys: DataKeys,
    private readonly purpose: string,
  ) {}

  async of(handle: KeysHandle, value: string): Promise<string> {
    this.key ??= this.keys
      .secretOf(handle, peopleIndexScope)
      .then((secret) =>
        Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), `dmarc-ledger ${this.purpose}`, 32)),
      );
    const pending = this.key;
    const key = await pending.catch((error: unknown) => {
      if (this.key === pending) this.key = null;
      throw error;
    });
    return createHmac("sha256", key).update(value, "utf8").digest("hex");
  }
}
