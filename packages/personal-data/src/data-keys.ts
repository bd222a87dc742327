import { randomBytes } from "node:crypto";
import type { Personal, SealedData } from "@dmarc-ledger/events";
import { type Kysely, sql } from "kysely";
import { decrypt, encrypt } from "./aes-gcm.js";
import { type MasterKeys, masterKeyId } from "./master-keys.js";
import type { PersonalDataSchema } from "./schema.js";
import { domainScope, ownerOf, tenantOfDomain } from "./tenant-of-domain.js";

interface KeyRow {
  key_id: string;
  wrapped: Uint8Array;
  master_key_id: string;
}

/**
 * How long sealForDomain reuses a domain's tenant and key without reading them again: a failure
 * report costs no query when others of its domain came in the last second (an import, a burst of
 * mail). The price: a report arriving within this of its key's shredding is sealed under the
 * shredded key, unreadable at once, as if it had arrived before; retention never shreds the
 * current month's key, so only an erasure meets it. Opening reads the key's row every time.
 */
const recentSealMs = 1000;
const maxRecentSeals = 10_000;

/** A handle on the database (or a transaction of it) that sees the data keys. */
// biome-ignore lint/suspicious/noExplicitAny: callers hold handles typed for their own tables
export type KeysHandle = Kysely<any>;

/** `YYYY-MM` of a time, UTC: data keys are per tenant and month. */
export function monthOf(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/**
 * The data keys of personal data (table data_key), wrapped by the master key. Seals a tenant's
 * data of a month under that month's key, made on first use, and opens sealed data while its key
 * exists: a deleted key (shredded by retention or erasure) opens as null, for good.
 *
 * Every open reads the keys' rows: an unwrapped key is cached, but only used while its row is
 * there, so that a key shredded by another process never opens anything here again (and is
 * dropped from memory when an open finds it gone). Seals read the row too, but for
 * sealForDomain's second of reuse (recentSealMs).
 */
export class DataKeys {
  private readonly unwrapped = new Map<string, Buffer>();
  /** A domain's tenant and key of the month, as read at most recentSealMs ago (sealForDomain). */
  private readonly recentSeals = new Map<
    string,
    { tenantId: string; key: { keyId: string; bytes: Buffer }; until: number }
  >();
  private readonly currentId: string;
  private readonly previousId: string | null;

  constructor(private readonly masters: MasterKeys) {
    this.currentId = masterKeyId(masters.current);
    this.previousId = masters.previous ? masterKeyId(masters.previous) : null;
  }

  /**
   * Seals `value` (as JSON) under the key of `tenantId` for the month of `at`. With `create`
   * false the key must exist already: inside a transaction that appends events nothing may be
   * written before the append (its order guard, packages/event-store), so there the key is only
   * read (packages/intake seals before that transaction).
   */
  async seal(
    handle: KeysHandle,
    tenantId: string,
    at: Date,
    value: unknown,
    create = true,
  ): Promise<SealedData> {
    return this.sealWith(await this.keyFor(handle, tenantId, monthOf(at), create), tenantId, value);
  }

  private sealWith(key: { keyId: string; bytes: Buffer }, tenantId: string, value: unknown): SealedData {
    const data = encrypt(key.bytes, Buffer.from(JSON.stringify(value), "utf8"), key.keyId);
    return { keyId: key.keyId, tenantId, data: data.toString("base64") };
  }

  /**
   * Seals `value` under the key, for the month of `at`, of the tenant `domain` counts for (its
   * owner or its nearest parent's; the domain's own scope when nobody's): the tenant and the key
   * in one query.
   */
  async sealForDomain(
    handle: KeysHandle,
    domain: string,
    at: Date,
    value: unknown,
    create = true,
  ): Promise<SealedData> {
    const month = monthOf(at);
    const cacheKey = `${domain}\u0000${month}`;
    const cached = this.recentSeals.get(cacheKey);
    if (cached && cached.until > Date.now()) return this.sealWith(cached.key, cached.tenantId, value);
    const { rows } = await sql<KeyRow & { tenant_id: string }>`
      with owner as (select coalesce((${ownerOf(domain)}), ${domainScope(domain)}) as tenant_id)
      select owner.tenant_id, k.key_id, k.wrapped, k.master_key_id
      from owner left join data_key k on k.tenant_id = owner.tenant_id and k.month = ${month}`.execute(
      handle,
    );
    const row = rows[0]!;
    const key = row.key_id
      ? { keyId: row.key_id, bytes: this.unwrap(row) }
      : await this.keyFor(handle, row.tenant_id, month, create);
    if (this.recentSeals.size >= maxRecentSeals) this.recentSeals.clear();
    this.recentSeals.set(cacheKey, { tenantId: row.tenant_id, key, until: Date.now() + recentSealMs });
    return this.sealWith(key, row.tenant_id, value);
  }

  /**
   * The bytes of the key of `scope` that belongs to no month (`-`), made on first use: the secret
   * a blind index is derived from (blind-index.ts). Wrapped like every data key, so `keys rotate`
   * rewraps it and the index stays the same; never shredded by retention (keyScopes leaves it out).
   */
  async secretOf(handle: KeysHandle, scope: string): Promise<Buffer> {
    return (await this.keyFor(handle, scope, "-", true)).bytes;
  }

  /** Whose key seals a report about `domain` (tenantOfDomain). */
  tenantOf(handle: KeysHandle, domain: string): Promise<string> {
    return tenantOfDomain(handle, domain);
  }

  /** The values of `personal` envelopes, in order; null where the key is gone (shredded). */
  async open<T>(handle: KeysHandle, envelopes: readonly Personal<T>[]): Promise<(T | null)[]> {
    const keyIds = [...new Set(envelopes.flatMap((e) => ("sealed" in e ? [e.sealed.keyId] : [])))];
    const keys = await this.keysById(handle, keyIds);
    return envelopes.map((envelope) => {
      if ("clear" in envelope) return envelope.clear;
      const key = keys.get(envelope.sealed.keyId);
      if (!key) return null;
      const plain = decrypt(key, Buffer.from(envelope.sealed.data, "base64"), envelope.sealed.keyId);
      return JSON.parse(plain.toString("utf8")) as T;
    });
  }

  /**
   * Rewraps every data key under the current master key (after MASTER_KEY changed, with the old
   * one in MASTER_KEY_PREVIOUS). Returns how many were rewrapped; the data they seal is untouched.
   */
  async rewrapAll(handle: KeysHandle): Promise<number> {
    const db = handle as Kysely<PersonalDataSchema>;
    const rows = await db
      .selectFrom("data_key")
      .select(["key_id", "wrapped", "master_key_id"])
      .where("master_key_id", "!=", this.currentId)
      .execute();
    for (const row of rows) {
      const bytes = this.unwrap(row);
      await db
        .updateTable("data_key")
        .set({ wrapped: encrypt(this.masters.current, bytes, row.key_id), master_key_id: this.currentId })
        .where("key_id", "=", row.key_id)
        .where("master_key_id", "=", row.master_key_id)
        .execute();
    }
    return rows.length;
  }

  /**
   * The master key ids that wrapped stored data keys and are neither MASTER_KEY nor
   * MASTER_KEY_PREVIOUS: a service started with these would seal new data and fail to read old.
   */
  async unknownMasterKeyIds(handle: KeysHandle): Promise<string[]> {
    const db = handle as Kysely<PersonalDataSchema>;
    const rows = await db.selectFrom("data_key").select("master_key_id").distinct().execute();
    return rows.map((r) => r.master_key_id).filter((id) => id !== this.currentId && id !== this.previousId);
  }

  private async keyFor(
    handle: KeysHandle,
    tenantId: string,
    month: string,
    create: boolean,
  ): Promise<{ keyId: string; bytes: Buffer }> {
    const db = handle as Kysely<PersonalDataSchema>;
    const find = () =>
      db
        .selectFrom("data_key")
        .select(["key_id", "wrapped", "master_key_id"])
        .where("tenant_id", "=", tenantId)
        .where("month", "=", month)
        .executeTakeFirst();
    let row = await find();
    if (!row && !create)
      throw new Error(`no data key of ${tenantId} for ${month} was made before the transaction`);
    if (!row) {
      const keyId = randomBytes(16).toString("hex");
      const bytes = randomBytes(32);
      // Another input may make the same month's key at the same moment: one wins, both use it.
      await db
        .insertInto("data_key")
        .values({
          key_id: keyId,
          tenant_id: tenantId,
          month,
          wrapped: encrypt(this.masters.current, bytes, keyId),
          master_key_id: this.currentId,
        })
        .onConflict((oc) => oc.columns(["tenant_id", "month"]).doNothing())
        .execute();
      row = await find();
      if (!row) throw new Error(`the data key of ${tenantId} for ${month} was removed as it was made`);
    }
    return { keyId: row.key_id, bytes: this.unwrap(row) };
  }

  private async keysById(handle: KeysHandle, keyIds: string[]): Promise<Map<string, Buffer>> {
    const found = new Map<string, Buffer>();
    if (keyIds.length === 0) return found;
    const db = handle as Kysely<PersonalDataSchema>;
    const rows = await db
      .selectFrom("data_key")
      .select(["key_id", "wrapped", "master_key_id"])
      .where("key_id", "in", keyIds)
      .execute();
    for (const row of rows) found.set(row.key_id, this.unwrap(row));
    // A key shredded since it was unwrapped here: not kept in memory either.
    for (const keyId of keyIds) {
      if (found.has(keyId)) continue;
      for (const cached of this.unwrapped.keys())
        if (cached.startsWith(`${keyId}@`)) this.unwrapped.delete(cached);
    }
    return found;
  }

  private unwrap(row: KeyRow): Buffer {
    const cacheKey = `${row.key_id}@${row.master_key_id}`;
    const cached = this.unwrapped.get(cacheKey);
    if (cached) return cached;
    const master =
      row.master_key_id === this.currentId
        ? this.masters.current
        : row.master_key_id === this.previousId
          ? this.masters.previous
          : null;
    if (!master) {
      throw new Error(
        `data key ${row.key_id} is wrapped by master key ${row.master_key_id}, which is neither MASTER_KEY nor MASTER_KEY_PREVIOUS`,
      );
    }
    const bytes = decrypt(master, row.wrapped, row.key_id);
    this.unwrapped.set(cacheKey, bytes);
    return bytes;
  }
}
