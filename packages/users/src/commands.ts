import { randomBytes } from "node:crypto";
import type { EventStore } from "@dmarc-ledger/event-store";
import { type EventMetadata, newEvent, type Role, streams } from "@dmarc-ledger/events";
import { readTenant } from "@dmarc-ledger/tenancy";
import type { Kysely } from "kysely";
import { normaliseEmail } from "./email.js";
import { InvalidPasswordLinkError, LastAdminError, UnknownUserError } from "./errors.js";
import { checkPasswordRules, hashPassword } from "./passwords.js";
import type { UsersSchema } from "./schema.js";
import { newToken, tokenHash } from "./tokens.js";
import { readUser, type UserState } from "./user-history.js";

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
  input: { tenantId: string; email: string; role: Role; linkTtlMs: number },
  metadata: EventMetadata,
): Promise<AddedUser> {
  const email = normaliseEmail(input.email);
  await readTenant(store, input.tenantId);
  const existing = await readUser(store, email);
  const userId = existing?.userId ?? randomBytes(8).toString("hex");
  const expiresAt = new Date(Date.now() + input.linkTtlMs);
  const events = [];
  if (!existing) events.push(newEvent("UserCreated", { userId, email }, metadata));
  const current = existing?.roles.get(input.tenantId);
  if (current !== input.role) {
    if (current === "admin") await refuseLastAdmin(db, existing!, input.tenantId);
    events.push(
      newEvent("UserRoleGranted", { userId, tenantId: input.tenantId, role: input.role }, metadata),
    );
  }
  events.push(
    newEvent(
      "UserPasswordLinkIssued",
      { userId, tenantId: input.tenantId, expiresAt: expiresAt.toISOString() },
      metadata,
    ),
  );
  const result = await store.append(streams.user(email), events, existing ? existing.revision : "no_stream");
  const token = newToken();
  await db
    .insertInto("user_password_link")
    .values({
      token_hash: tokenHash(token),
      user_id: userId,
      email,
      tenant_id: input.tenantId,
      expires_at: expiresAt,
    })
    .execute();
  return {
    userId,
    email,
    outcome: !existing ? "created" : current === input.role ? "unchanged" : "granted",
    link: { token, expiresAt },
    position: result.position,
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
    .select("email")
    .where("user_id", "=", userId)
    .executeTakeFirst();
  const user = account ? await readUser(store, account.email) : null;
  const role = user?.roles.get(tenantId);
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
    throw new LastAdminError(`${user.email} is the tenant's last admin; make another admin first.`);
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
    streams.user(user.email),
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

/** Takes a member out of the tenant: their role goes, and with it their sessions there. */
export async function removeUser(
  store: EventStore,
  db: Kysely<UsersSchema>,
  input: { tenantId: string; userId: string },
  metadata: EventMetadata,
): Promise<bigint> {
  const user = await memberOf(store, db, input.tenantId, input.userId);
  if (user.role === "admin") await refuseLastAdmin(db, user, input.tenantId);
  const result = await store.append(
    streams.user(user.email),
    [newEvent("UserRoleRevoked", { userId: user.userId, tenantId: input.tenantId }, metadata)],
    user.revision,
  );
  await db
    .deleteFrom("user_session")
    .where("user_id", "=", user.userId)
    .where("tenant_id", "=", input.tenantId)
    .execute();
  await db
    .deleteFrom("user_password_link")
    .where("user_id", "=", user.userId)
    .where("tenant_id", "=", input.tenantId)
    .execute();
  return result.position;
}

/** A new one-time link for a member (who lost their password, or never used the first link). */
export async function issuePasswordLink(
  store: EventStore,
  db: Kysely<UsersSchema>,
  input: { tenantId: string; userId: string; linkTtlMs: number },
  metadata: EventMetadata,
): Promise<PasswordLink & { email: string; position: bigint }> {
  const user = await memberOf(store, db, input.tenantId, input.userId);
  const added = await addUser(
    store,
    db,
    { tenantId: input.tenantId, email: user.email, role: user.role, linkTtlMs: input.linkTtlMs },
    metadata,
  );
  return { ...added.link, email: user.email, position: added.position };
}

/**
 * Sets the password of the link's user and uses the link up. Every session of the user ends: a
 * new password is often chosen because the old one leaked.
 */
export async function setPassword(
  store: EventStore,
  db: Kysely<UsersSchema>,
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
  // By address, from the user's stream: the link works before the read model shows them.
  const user = await readUser(store, link.email);
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
    streams.user(user.email),
    [
      newEvent(
        "UserPasswordSet",
        { userId: user.userId, tenantId: link.tenant_id },
        { ...metadata, causedBy: `user:${user.userId}` },
      ),
    ],
    "stream_exists",
  );
  return { userId: user.userId, email: user.email, position: result.position };
}
