import type { EventStore, ExpectedRevision } from "@dmarc-ledger/event-store";
import { decodeEvent, type Personal, type Role } from "@dmarc-ledger/events";
import type { DataKeys, KeysHandle } from "@dmarc-ledger/personal-data";
import { userStreamsOf } from "./addresses.js";

export interface UserState {
  userId: string;
  /** The stream the user's events go to. */
  stream: string;
  /** The address as UserCreated holds it (sealed; in clear for users made before sealing). */
  email: Personal<string>;
  /** The user's role in each tenant that has them. */
  roles: Map<string, Role>;
  /** For an optimistic append to the user's stream. */
  revision: bigint;
}

/**
 * The live user of a stream, as it says (the read model may lag): the one of its last
 * UserCreated, unless a UserErased followed. `revision`: where to append (a new UserCreated after
 * an erased one), "no_stream" for an empty stream.
 */
export async function readUserStream(
  store: EventStore,
  stream: string,
): Promise<{ user: UserState | null; revision: ExpectedRevision }> {
  const history = await store.readStream(stream);
  let user: UserState | null = null;
  for (const recorded of history) {
    // Decoded: a UserCreated of v1 holds the address in clear, lifted to `email.clear`.
    const event = decodeEvent(recorded);
    if (event?.type === "UserCreated") {
      user = { userId: event.data.userId, stream, email: event.data.email, roles: new Map(), revision: 0n };
    } else if (event?.type === "UserErased") {
      user = null;
    } else if (user && event?.type === "UserRoleGranted") {
      user.roles.set(event.data.tenantId, event.data.role);
    } else if (user && event?.type === "UserRoleRevoked") {
      user.roles.delete(event.data.tenantId);
    }
  }
  const last = history.at(-1);
  if (user && last) user.revision = last.revision;
  return { user, revision: last ? last.revision : "no_stream" };
}

/**
 * The user of an address: on today's stream (by blind index), or on the stream versions before
 * sealing used (SHA-256 of the address), where those users stay. With no live user, where a new
 * one goes: today's stream, at its revision.
 */
export async function findUser(
  store: EventStore,
  handle: KeysHandle,
  keys: DataKeys,
  email: string,
): Promise<{ user: UserState | null; stream: string; revision: ExpectedRevision }> {
  const { current, legacy } = await userStreamsOf(handle, keys, email);
  const found = await readUserStream(store, current);
  if (found.user) return { ...found, stream: current };
  const old = await readUserStream(store, legacy);
  if (old.user) return { ...old, stream: legacy };
  return { user: null, stream: current, revision: found.revision };
}
