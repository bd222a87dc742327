import type { EventStore } from "@dmarc-ledger/event-store";
import { type EventMetadata, newEvent, type PersonalDataPolicySet, streams } from "@dmarc-ledger/events";
import type { Projection } from "@dmarc-ledger/projection-engine";
import type { Kysely } from "kysely";
import type { PersonalDataSchema } from "./schema.js";

export type PersonalDataPolicy = Omit<PersonalDataPolicySet, "tenantId">;

/** Until a tenant sets its own (docs/privacy.md). */
export const defaultPolicy: PersonalDataPolicy = {
  failureReportDays: 90,
  rawInputDays: 90,
  aggregateDays: null,
  redaction: true,
};

/**
 * Days from 1 to 3,650: one day at least, so that what arrives is seen; ten years at most. The
 * aggregate facts may also be kept (null, the default).
 */
export const retentionDays = { min: 1, max: 3650 } as const;

export class InvalidPolicyError extends Error {
  override readonly name = "InvalidPolicyError";
}

export function checkPolicy(policy: PersonalDataPolicy): void {
  const days: [string, number | null][] = [
    ["failureReportDays", policy.failureReportDays],
    ["rawInputDays", policy.rawInputDays],
    ["aggregateDays", policy.aggregateDays],
  ];
  for (const [name, value] of days) {
    if (value === null && name === "aggregateDays") continue;
    if (!Number.isInteger(value) || value! < retentionDays.min || value! > retentionDays.max) {
      throw new InvalidPolicyError(
        `${name} must be a whole number of days from ${retentionDays.min} to ${retentionDays.max}`,
      );
    }
  }
}

/** Appends the tenant's new policy (the whole of it) to its stream. */
export async function setPersonalDataPolicy(
  store: EventStore,
  tenantId: string,
  policy: PersonalDataPolicy,
  metadata: EventMetadata,
): Promise<{ position: bigint }> {
  checkPolicy(policy);
  const result = await store.append(
    streams.tenant(tenantId),
    [newEvent("PersonalDataPolicySet", { tenantId, ...policy }, metadata)],
    // The tenant's stream exists: a policy for no tenant is refused.
    "stream_exists",
  );
  return { position: result.position };
}

/** The tenant's policy as projected, or the defaults. */
export async function personalDataPolicy(
  // biome-ignore lint/suspicious/noExplicitAny: callers hold handles typed for their own tables
  handle: Kysely<any>,
  tenantId: string,
): Promise<PersonalDataPolicy> {
  const db = handle as Kysely<PersonalDataSchema>;
  const row = await db
    .selectFrom("personal_data_policy")
    .selectAll()
    .where("tenant_id", "=", tenantId)
    .executeTakeFirst();
  if (!row) return { ...defaultPolicy };
  return {
    failureReportDays: row.failure_report_days,
    rawInputDays: row.raw_input_days,
    aggregateDays: row.aggregate_days,
    redaction: row.redaction,
  };
}

/** The policies of the tenants that set one, by tenant. */
export async function personalDataPolicies(
  // biome-ignore lint/suspicious/noExplicitAny: callers hold handles typed for their own tables
  handle: Kysely<any>,
): Promise<Map<string, PersonalDataPolicy>> {
  const db = handle as Kysely<PersonalDataSchema>;
  const rows = await db.selectFrom("personal_data_policy").selectAll().execute();
  return new Map(
    rows.map((row) => [
      row.tenant_id,
      {
        failureReportDays: row.failure_report_days,
        rawInputDays: row.raw_input_days,
        aggregateDays: row.aggregate_days,
        redaction: row.redaction,
      },
    ]),
  );
}

export const personalDataPolicyProjection: Projection<PersonalDataSchema> = {
  name: "personal_data_policy",
  tables: ["personal_data_policy"],
  handles: new Set(["PersonalDataPolicySet"]),
  async apply(trx, events) {
    for (const event of events) {
      if (event.type !== "PersonalDataPolicySet") continue;
      const row = {
        failure_report_days: event.data.failureReportDays,
        raw_input_days: event.data.rawInputDays,
        aggregate_days: event.data.aggregateDays,
        redaction: event.data.redaction,
      };
      await trx
        .insertInto("personal_data_policy")
        .values({ tenant_id: event.data.tenantId, ...row })
        .onConflict((oc) => oc.column("tenant_id").doUpdateSet(row))
        .execute();
    }
  },
};
