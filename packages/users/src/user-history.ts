import type { EventStore } from "@dmarc-ledger/event-store";
import { type Role, streams, type UserCreated, type UserRoleGranted } from "@dmarc-ledger/events";

export interface UserState {
  userId: string;
  email: string;
  /** The user's role in each tenant that has them. */
  roles: Map<string, Role>;
  /** For an optimistic append to the user's stream. */
  revision: bigint;
}

/** A user as their own stream says (the read model may lag); null when the address has none. */
export async function readUser(store: EventStore, email: string): Promise<UserState | null> {
  const history = await store.readStream(streams.user(email));
  const created = history[0];
  if (created?.type !== "UserCreated") return null;
  const roles = new Map<string, Role>();
  for (const event of history) {
    if (event.type === "UserRoleGranted") {
      const granted = event.data as UserRoleGranted;
      roles.set(granted.tenantId, granted.role);
    } else if (event.type === "UserRoleRevoked") {
      roles.delete((event.data as { tenantId: string }).tenantId);
    }
  }
  const { userId } = created.data as UserCreated;
  return { userId, email, roles, revision: history.at(-1)!.revision };
}
