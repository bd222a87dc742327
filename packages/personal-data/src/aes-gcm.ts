import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

const nonceBytes = 12;
const tagBytes = 16;

/** AES-256-GCM: nonce, ciphertext and tag in one buffer; `aad` binds it to what it belongs to. */
export function encrypt(key: Uint8Array, plaintext: Uint8Array, aad: string): Buffer {
  const nonce = randomBytes(nonceBytes);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  cipher.setAAD(Buffer.from(aad, "utf8"));
  const body = cipher.update(plaintext);
  cipher.final();
  return Buffer.concat([nonce, body, cipher.getAuthTag()]);
}

/** Throws when the key is not the one it was sealed with, or the bytes were changed. */
export function decrypt(key: Uint8Array, sealed: Uint8Array, aad: string): Buffer {
  const bytes = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
  if (bytes.length < nonceBytes + tagBytes) throw new Error("sealed data too short");
  const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, nonceBytes));
  decipher.setAAD(Buffer.from(aad, "utf8"));
  decipher.setAuthTag(bytes.subarray(bytes.length - tagBytes));
  return Buffer.concat([
    decipher.update(bytes.subarray(nonceBytes, bytes.length - tagBytes)),
    decipher.final(),
  ]);
}
