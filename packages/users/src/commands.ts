import { randomBytes } from "node:crypto";
import type { EventStore } from "@dmarc-ledger/event-store";
import { type EventMetadata, newEvent, type Role } from "@dmarc-ledger/events";
import { type DataKeys, personScope, shredDataKeys } from "@dmarc-ledger/personal-data";
import { readTenant } from "@dmarc-ledger/tenancy";
import type { Kysely } from "kysely";
import { openEmails, sealEmail } from "./addresses.js";
import { normaliseEmail } from "./email.js";
import { InvalidPasswordLinkError, LastAdminError, UnknownUserError } from "./errors.js";
import { checkPasswordRules, hashPassword } from "./passwords.js";
import type { UsersSchema } from "./schema.js";
import { newToken, tokenHash } from "./tokens.js";
import { findUser, readUserStream, type UserState } from "./user-history.js";

export interface PasswordLink {
  /** The one-time token: shown in the link once, stored only hashed. */
  token: string;
  expiresAt: Date;
}

/**
 * The link a person opens to choose their password. The token rides in the fragment, which
 * browsers never send to a server: it stays out of access logs, proxies and referrers.
 */
export const setPasswordUrl = (dashboardUrl: string, link: PasswordLink) =>
  `${new URL("set-password", dashboardUrl)}#token=${link.token}`;

export interface AddedUser {
  userId: string;
  email: string;
  /** "created": a new account; "granted": an existing one got a role here or a new one. */
  outcome: "created" | "granted" | "unchanged";
  link: PasswordLink;
  position: bigint;
}

/**
 * Makes the address a member of the tenant with the role, and issues a one-time set-password
 * link for it: a new account, a role for an existing account, a changed role, or only a new link
 * (the way back in for a member who lost their password). The tenant must exist.
 */
export async function addUser(
  store: EventStore,
  db: Kysely<UsersSchema>,
  keys: DataKeys,
  input: { tenantId: string; email: string; role: Role; linkTtlMs: number },
  metadata: EventMetadata,
): Promise<AddedUser> {
  const email = normaliseEmail(input.email);
  await readTenant(store, input.tenantId);
  const found = await findUser(store, db, keys, email);
  const existing = found.user;
  const userId = existing?.userId ?? randomBytes(8).toString("hex");
  const expiresAt = new Date(Date.now() + input.linkTtlMs);
  const events = [];
  if (!existing) {
    // The person's key is made before the append (a refused append shreds it again, below).
    const sealed = await sealEmail(db, keys, userId, email, new Date());
    events.push(newEvent("UserCreated", { userId, email: sealed }, metadata));
  }
  const current = existing?.roles.get(input.tenantId);
  if (current !== input.role) {
    if (current === "admin") await refuseLastAdmin(db, existing!, input.tenantId);
    events.push(
      newEvent("UserRoleGranted", { userId, tenantId: input.tenantId, role: input.role }, metadata),
    );
  }
  const link = issueLink(db, { userId, stream: found.stream, tenantId: input.tenantId, expiresAt });
  events.push(
    newEvent(
      "UserPasswordLinkIssued",
      { userId, tenantId: input.tenantId, expiresAt: expiresAt.toISOString() },
      metadata,
    ),
  );
  let result: { position: bigint };
  try {
    result = await store.append(found.stream, events, existing ? existing.revision : found.revision);
  } catch (error) {
    // Another request made the account first: the key made here seals nothing, and goes.
    if (!existing) await shredDataKeys(db, personScope(userId));
    throw error;
  }
  await link.store();
  return {
    userId,
    email,
    outcome: !existing ? "created" : current === input.role ? "unchanged" : "granted",
    link: link.link,
    position: result.position,
  };
}

/** A one-time link's token, and the row that keeps its hash (stored once the event is appended). */
function issueLink(
  db: Kysely<UsersSchema>,
  input: { userId: string; stream: string; tenantId: string; expiresAt: Date },
): { link: PasswordLink; store: () => Promise<void> } {
  const token = newToken();
  return {
    link: { token, expiresAt: input.expiresAt },
    store: async () => {
      await db
        .insertInto("user_password_link")
        .values({
          token_hash: tokenHash(token),
          user_id: input.userId,
          stream: input.stream,
          tenant_id: input.tenantId,
          expires_at: input.expiresAt,
        })
        .execute();
    },
  };
}

/** A member of the tenant, by id, as their stream says; UnknownUserError for anyone else. */
async function memberOf(
  store: EventStore,
  db: Kysely<UsersSchema>,
  tenantId: string,
  userId: string,
): Promise<UserState & { role: Role }> {
  const account = await db
    .selectFrom("user_account")
    .select("stream")
    .where("user_id", "=", userId)
    .executeTakeFirst();
  const { user } = account ? await readUserStream(store, account.stream) : { user: null };
  const role = user?.userId === userId ? user.roles.get(tenantId) : undefined;
  if (!user || !role) throw new UnknownUserError(`The tenant has no user ${userId}.`);
  return { ...user, role };
}

/** A tenant keeps at least one admin: otherwise nobody could manage its people or keys. */
async function refuseLastAdmin(db: Kysely<UsersSchema>, user: UserState, tenantId: string): Promise<void> {
  const admins = await db
    .selectFrom("user_role")
    .select("user_id")
    .where("tenant_id", "=", tenantId)
    .where("role", "=", "admin")
    .execute();
  if (admins.every((admin) => admin.user_id === user.userId)) {
    throw new LastAdminError(`User ${user.userId} is the tenant's last admin; make another admin first.`);
  }
}

/** Changes a member's role in the tenant. */
export async function changeRole(
  store: EventStore,
  db: Kysely<UsersSchema>,
  input: { tenantId: string; userId: string; role: Role },
  metadata: EventMetadata,
): Promise<bigint | null> {
  const user = await memberOf(store, db, input.tenantId, input.userId);
  if (user.role === input.role) return null;
  if (user.role === "admin") await refuseLastAdmin(db, user, input.tenantId);
  const result = await store.append(
    user.stream,
    [
      newEvent(
        "UserRoleGranted",
        { userId: user.userId, tenantId: input.tenantId, role: input.role },
        metadata,
      ),
    ],
    user.revision,
  );
  return result.position;
}

/**
 * Takes a member out of the tenant: their role goes, and with it their sessions there. A person
 * left with no tenant is erased: their key is shredded first (the address in their events can
 * never be read again), then their password, sessions and links go, and UserErased says so.
 */
export async function removeUser(
  store: EventStore,
  db: Kysely<UsersSchema>,
  input: { tenantId: string; userId: string },
  metadata: EventMetadata,
): Promise<{ position: bigint; erased: boolean }> {
  const user = await memberOf(store, db, input.tenantId, input.userId);
  if (user.role === "admin") await refuseLastAdmin(db, user, input.tenantId);
  return takeOut(store, db, user, input.tenantId, metadata);
}

async function takeOut(
  store: EventStore,
  db: Kysely<UsersSchema>,
  user: UserState,
  tenantId: string,
  metadata: EventMetadata,
): Promise<{ position: bigint; erased: boolean }> {
  const erased = [...user.roles.keys()].every((tenant) => tenant === tenantId);
  const events = [newEvent("UserRoleRevoked", { userId: user.userId, tenantId }, metadata)];
  if (erased) {
    // Shredded before anything else: a crash after this leaves an account whose address reads
    // as removed, which the same command removes again; never an address that outlived it.
    await shredDataKeys(db, personScope(user.userId));
    await db.deleteFrom("user_credential").where("user_id", "=", user.userId).execute();
    events.push(newEvent("UserErased", { userId: user.userId }, metadata));
  }
  const result = await store.append(user.stream, events, user.revision);
  await db
    .deleteFrom("user_session")
    .where("user_id", "=", user.userId)
    .$if(!erased, (q) => q.where("tenant_id", "=", tenantId))
    .execute();
  await db
    .deleteFrom("user_password_link")
    .where("user_id", "=", user.userId)
    .$if(!erased, (q) => q.where("tenant_id", "=", tenantId))
    .execute();
  return { position: result.position, erased };
}

/**
 * Every person of the tenant taken out of it (its erasure, docs/privacy.md): those of no other
 * tenant erased, their keys shredded. No last-admin rule: the tenant is left without people.
 * Reads the people from the read model: the caller catches it up first. Returns how many.
 */
export async function removeTenantPeople(
  store: EventStore,
  db: Kysely<UsersSchema>,
  tenantId: string,
  metadata: EventMetadata,
): Promise<{ removed: number; erased: number; position: bigint | null }> {
  const members = await db
    .selectFrom("user_role")
    .select("user_id")
    .where("tenant_id", "=", tenantId)
    .execute();
  let removed = 0;
  let erased = 0;
  let position: bigint | null = null;
  for (const member of members) {
    let user: UserState;
    try {
      user = await memberOf(store, db, tenantId, member.user_id);
    } catch (error) {
      if (error instanceof UnknownUserError) continue;
      throw error;
    }
    const done = await takeOut(store, db, user, tenantId, metadata);
    removed += 1;
    if (done.erased) erased += 1;
    position = done.position;
  }
  // Sessions of the tenant whose person the read model did not show yet: ended all the same.
  await db.deleteFrom("user_session").where("tenant_id", "=", tenantId).execute();
  await db.deleteFrom("user_password_link").where("tenant_id", "=", tenantId).execute();
  return { removed, erased, position };
}

/** A new one-time link for a member (who lost their password, or never used the first link). */
export async function issuePasswordLink(
  store: EventStore,
  db: Kysely<UsersSchema>,
  keys: DataKeys,
  input: { tenantId: string; userId: string; linkTtlMs: number },
  metadata: EventMetadata,
): Promise<PasswordLink & { email: string; position: bigint }> {
  const user = await memberOf(store, db, input.tenantId, input.userId);
  const [email] = await openEmails(db, keys, [user.email]);
  if (!email) throw new UnknownUserError(`The tenant has no user ${input.userId}.`);
  const expiresAt = new Date(Date.now() + input.linkTtlMs);
  const link = issueLink(db, {
    userId: user.userId,
    stream: user.stream,
    tenantId: input.tenantId,
    expiresAt,
  });
  const result = await store.append(
    user.stream,
    [
      newEvent(
        "UserPasswordLinkIssued",
        { userId: user.userId, tenantId: input.tenantId, expiresAt: expiresAt.toISOString() },
        metadata,
      ),
    ],
    user.revision,
  );
  await link.store();
  return { ...link.link, email, position: result.position };
}

/**
 * Sets the password of the link's user and uses the link up. Every session of the user ends: a
 * new password is often chosen because the old one leaked.
 */
export async function setPassword(
  store: EventStore,
  db: Kysely<UsersSchema>,
  keys: DataKeys,
  input: { token: string; password: string },
  metadata: Omit<EventMetadata, "causedBy">,
): Promise<{ userId: string; email: string; position: bigint }> {
  const link = await db
    .selectFrom("user_password_link")
    .selectAll()
    .where("token_hash", "=", tokenHash(input.token))
    .executeTakeFirst();
  if (!link || link.expires_at.getTime() <= Date.now()) {
    throw new InvalidPasswordLinkError(
      "This link is unknown, used or expired; ask an admin of your account for a new one.",
    );
  }
  checkPasswordRules(input.password);
  // From the user's stream: the link works before the read model shows them.
  const { user } = await readUserStream(store, link.stream);
  if (user?.userId !== link.user_id || !user.roles.has(link.tenant_id)) {
    throw new InvalidPasswordLinkError(
      "This link is no longer valid; ask an admin of your account for a new one.",
    );
  }
  const passwordHash = await hashPassword(input.password);
  // Used up first: two requests with one link cannot both set a password.
  const used = await db
    .deleteFrom("user_password_link")
    .where("token_hash", "=", link.token_hash)
    .returning("token_hash")
    .executeTakeFirst();
  if (!used) throw new InvalidPasswordLinkError("This link was used meanwhile; ask for a new one.");
  await db
    .insertInto("user_credential")
    .values({ user_id: user.userId, password_hash: passwordHash, set_at: new Date() })
    .onConflict((oc) => oc.column("user_id").doUpdateSet({ password_hash: passwordHash, set_at: new Date() }))
    .execute();
  await db.deleteFrom("user_session").where("user_id", "=", user.userId).execute();
  const result = await store.append(
    user.stream,
    [
      newEvent(
        "UserPasswordSet",
        { userId: user.userId, tenantId: link.tenant_id },
        { ...metadata, causedBy: `user:${user.userId}` },
      ),
    ],
    "stream_exists",
  );
  const [email] = await openEmails(db, keys, [user.email]);
  return { userId: user.userId, email: email ?? "", position: result.position };
}

/** The id of the account of an address (by its blind index), or null when it has none. */
export async function findUserId(
  store: EventStore,
  db: Kysely<UsersSchema>,
  keys: DataKeys,
  email: string,
): Promise<string | null> {
  const found = await findUser(store, db, keys, normaliseEmail(email));
  return found.user?.userId ?? null;
}
