import { type Kysely, sql } from "kysely";
import type { IntakeSchema } from "./schema.js";
import type { InputOwner } from "./tenant-inputs.js";

/**
 * The raw archive keeps an input's bytes for reprocessing; they are the whole message, personal
 * data included (docs/privacy.md). Purging drops the bytes and keeps what is not personal: the
 * hash, size, channel, outcome and the items' report identities, so the history of what arrived
 * stays and a second delivery is still known. Reprocessing a purged input says it has no bytes.
 */

/**
 * Drops the bytes of the owner's inputs (listTenantInputs' rule: their reports name its domains, or
 * it uploaded them) last received before `before`, or all of them (null: erasure). Returns how many.
 */
export async function purgeOwnerInputs(
  db: Kysely<IntakeSchema>,
  owner: InputOwner,
  before: Date | null,
): Promise<number> {
  const { rows } = await sql<{ n: string | number }>`
    with mine as (
      select sha256 from raw_input_domain where domain = any(${[...owner.domains]}::text[])
      union
      select sha256 from raw_input_receipt where tenant_id = ${owner.tenantId}),
    purged as (
      update raw_input r set content = null, compression = null
      from mine where r.sha256 = mine.sha256 and r.content is not null
        ${before ? sql`and r.last_seen < ${before}` : sql``}
      returning 1)
    select count(*) as n from purged`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/**
 * Drops the bytes of the inputs no tenant owns (no report of a tenant's domain in them, and not
 * uploaded by one) last received before `before`: the deployment's default retention.
 * `claimedDomains`: every tenant's report domains.
 */
export async function purgeUnclaimedInputs(
  db: Kysely<IntakeSchema>,
  claimedDomains: readonly string[],
  before: Date,
): Promise<number> {
  const { rows } = await sql<{ n: string | number }>`
    with claimed as (
      select sha256 from raw_input_domain where domain = any(${[...claimedDomains]}::text[])
      union
      select sha256 from raw_input_receipt where tenant_id is not null),
    purged as (
      update raw_input r set content = null, compression = null
      where r.content is not null and r.last_seen < ${before}
        and not exists (select 1 from claimed where claimed.sha256 = r.sha256)
      returning 1)
    select count(*) as n from purged`.execute(db);
  return Number(rows[0]?.n ?? 0);
}
