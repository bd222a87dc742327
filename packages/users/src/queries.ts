import type { Role } from "@dmarc-ledger/events";
import type { DataKeys } from "@dmarc-ledger/personal-data";
import { type Kysely, sql } from "kysely";
import { openEmails } from "./addresses.js";
import type { UsersSchema } from "./schema.js";

export interface TenantUser {
  userId: string;
  /** null when the person's key is gone (erased, or being erased). */
  email: string | null;
  role: Role;
  grantedAt: Date;
  passwordSet: boolean;
  lastSignInAt: Date | null;
}

/** The members of a tenant, by address (opened with their keys). */
export async function listTenantUsers(
  db: Kysely<UsersSchema>,
  keys: DataKeys,
  tenantId: string,
): Promise<TenantUser[]> {
  const rows = await db
    .selectFrom("user_role as r")
    .innerJoin("user_account as a", "a.user_id", "r.user_id")
    .select(["r.user_id", "a.sealed_email", "r.role", "r.granted_at", "a.password_set", "r.last_sign_in_at"])
    .where("r.tenant_id", "=", tenantId)
    .execute();
  const emails = await openEmails(
    db,
    keys,
    rows.map((row) => row.sealed_email),
  );
  return rows
    .map((row, index) => ({
      userId: row.user_id,
      email: emails[index] ?? null,
      role: row.role,
      grantedAt: row.granted_at,
      passwordSet: row.password_set,
      lastSignInAt: row.last_sign_in_at,
    }))
    .sort(
      (a, b) => (a.email ?? "\uffff").localeCompare(b.email ?? "\uffff") || a.userId.localeCompare(b.userId),
    );
}

export interface ActivityRecord {
  event: string;
  subject: string;
  causedBy: string;
  time: Date;
}

/** What was done to the tenant's users and keys, newest first. */
export async function tenantActivity(
  db: Kysely<UsersSchema>,
  input: { tenantId: string; page: number; perPage: number },
): Promise<{ total: number; records: ActivityRecord[] }> {
  const [count, rows] = await Promise.all([
    db
      .selectFrom("tenant_activity")
      .select(sql<string>`count(*)::text`.as("n"))
      .where("tenant_id", "=", input.tenantId)
      .executeTakeFirstOrThrow(),
    db
      .selectFrom("tenant_activity")
      .select(["event_type", "subject", "caused_by", "recorded_at"])
      .where("tenant_id", "=", input.tenantId)
      .orderBy("position", "desc")
      .limit(input.perPage)
      .offset((input.page - 1) * input.perPage)
      .execute(),
  ]);
  return {
    total: Number(count.n),
    records: rows.map((row) => ({
      event: row.event_type,
      subject: row.subject,
      causedBy: row.caused_by,
      time: row.recorded_at,
    })),
  };
}

/** The address of a user of the tenant, to name them where the trail says `user:<id>`. */
export async function userEmails(
  db: Kysely<UsersSchema>,
  keys: DataKeys,
  userIds: readonly string[],
): Promise<Map<string, string>> {
  if (userIds.length === 0) return new Map();
  const rows = await db
    .selectFrom("user_account")
    .select(["user_id", "sealed_email"])
    .where("user_id", "in", [...userIds])
    .execute();
  const emails = await openEmails(
    db,
    keys,
    rows.map((row) => row.sealed_email),
  );
  return new Map(
    rows.flatMap((row, index) => (emails[index] ? [[row.user_id, emails[index]!] as const] : [])),
  );
}
