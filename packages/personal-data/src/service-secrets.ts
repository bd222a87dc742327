import { decrypt, encrypt } from "./aes-gcm.js";
import type { DataKeys, KeysHandle } from "./data-keys.js";

/**
 * The scope of the monthless data key that seals a kind of secret the service keeps for its
 * tenants (webhook signing secrets): never shredded by retention, rewrapped by `keys rotate`.
 */
export const secretScope = (purpose: string) => `secret:${purpose}`;

/** A scope of service secrets (secretScope): kept, like people's keys, whatever the retention. */
export const isSecretScope = (scope: string) => scope.startsWith("secret:");

const sealedPrefix = "sealed:";

/**
 * Seals secrets the service must read back (a webhook's signing secret: it signs with it) under
 * one data key of scope `secret:<purpose>`, AES-256-GCM, each bound (AAD) to what it belongs to:
 * the master key wraps that data key as it wraps every other, so rotating MASTER_KEY rewraps it
 * (`keys rotate`) and the sealed secrets stay as they are.
 */
export class SecretBox {
  constructor(
    private readonly keys: DataKeys,
    private readonly purpose: string,
  ) {}

  async seal(handle: KeysHandle, owner: string, secret: string): Promise<string> {
    const key = await this.keys.secretOf(handle, secretScope(this.purpose));
    return sealedPrefix + encrypt(key, Buffer.from(secret, "utf8"), owner).toString("base64");
  }

  /**
   * The secret `stored` holds; a value kept before secrets were sealed (no prefix) is returned as
   * it is, so that it keeps working until it is sealed (isSealed tells which).
   */
  async open(handle: KeysHandle, owner: string, stored: string): Promise<string> {
    if (!SecretBox.isSealed(stored)) return stored;
    const key = await this.keys.secretOf(handle, secretScope(this.purpose));
    return decrypt(key, Buffer.from(stored.slice(sealedPrefix.length), "base64"), owner).toString("utf8");
  }

  static isSealed(stored: string): boolean {
    return stored.startsWith(sealedPrefix);
  }
}
