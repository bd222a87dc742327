import type { DomainEvent } from "@dmarc-ledger/events";
import type { Projection } from "@dmarc-ledger/projection-engine";
import type { Transaction } from "kysely";
import type { UsersSchema } from "./schema.js";

const causedBy = (event: DomainEvent) =>
  typeof event.metadata.causedBy === "string" ? event.metadata.causedBy : "unknown";

/** What an event of the trail is about: a user or a key. */
function subjectOf(event: DomainEvent): { tenantId: string; subject: string } | null {
  switch (event.type) {
    case "UserRoleGranted":
    case "UserRoleRevoked":
    case "UserPasswordLinkIssued":
    case "UserPasswordSet":
    case "UserSignedIn":
    case "UserSignedOut":
      return { tenantId: event.data.tenantId, subject: `user:${event.data.userId}` };
    case "ApiKeyIssued":
    case "ApiKeyRevoked":
      return { tenantId: event.data.tenantId, subject: `key:${event.data.keyId}` };
    default:
      return null;
  }
}

async function applyOne(trx: Transaction<UsersSchema>, event: DomainEvent): Promise<void> {
  switch (event.type) {
    case "UserCreated":
      await trx
        .insertInto("user_account")
        .values({
          user_id: event.data.userId,
          sealed_email: JSON.stringify(event.data.email),
          stream: event.stream,
          created_at: event.recordedAt,
          password_set: false,
        })
        .execute();
      break;
    case "UserErased":
      await trx.deleteFrom("user_role").where("user_id", "=", event.data.userId).execute();
      await trx.deleteFrom("user_account").where("user_id", "=", event.data.userId).execute();
      break;
    case "UserRoleGranted":
      await trx
        .insertInto("user_role")
        .values({
          user_id: event.data.userId,
          tenant_id: event.data.tenantId,
          role: event.data.role,
          granted_at: event.recordedAt,
          last_sign_in_at: null,
        })
        .onConflict((oc) => oc.columns(["user_id", "tenant_id"]).doUpdateSet({ role: event.data.role }))
        .execute();
      break;
    case "UserRoleRevoked":
      await trx
        .deleteFrom("user_role")
        .where("user_id", "=", event.data.userId)
        .where("tenant_id", "=", event.data.tenantId)
        .execute();
      break;
    case "UserPasswordSet":
      await trx
        .updateTable("user_account")
        .set({ password_set: true })
        .where("user_id", "=", event.data.userId)
        .execute();
      break;
    case "UserSignedIn":
      await trx
        .updateTable("user_role")
        .set({ last_sign_in_at: event.recordedAt })
        .where("user_id", "=", event.data.userId)
        .where("tenant_id", "=", event.data.tenantId)
        .execute();
      break;
  }
}

/**
 * The people of each tenant: accounts, their role in each tenant, and the trail of what was done
 * to a tenant's users and keys (and by whom), for the dashboard's settings.
 */
export const usersProjection: Projection<UsersSchema> = {
  name: "users",
  tables: ["user_account", "user_role", "tenant_activity"],
  handles: new Set([
    "UserCreated",
    "UserErased",
    "UserRoleGranted",
    "UserRoleRevoked",
    "UserPasswordLinkIssued",
    "UserPasswordSet",
    "UserSignedIn",
    "UserSignedOut",
    "ApiKeyIssued",
    "ApiKeyRevoked",
  ]),
  async apply(trx, events) {
    const trail = [];
    for (const event of events) {
      await applyOne(trx, event);
      const about = subjectOf(event);
      if (about) {
        trail.push({
          position: event.position.toString(),
          tenant_id: about.tenantId,
          event_type: event.type,
          subject: about.subject,
          caused_by: causedBy(event),
          recorded_at: event.recordedAt,
        });
      }
    }
    if (trail.length > 0) await trx.insertInto("tenant_activity").values(trail).execute();
  },
};

/** The users package's projections, in the order the engine applies them. */
export const usersProjections: readonly Projection<UsersSchema>[] = [usersProjection];
