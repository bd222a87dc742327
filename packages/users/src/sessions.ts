import type { EventStore } from "@dmarc-ledger/event-store";
import { type EventMetadata, newEvent, type Role, streams } from "@dmarc-ledger/events";
import type { DataKeys } from "@dmarc-ledger/personal-data";
import type { Kysely } from "kysely";
import { emailIndex } from "./addresses.js";
import { InvalidEmailError, normaliseEmail } from "./email.js";
import { passwordMatches, spendPasswordCheck } from "./passwords.js";
import type { UsersSchema } from "./schema.js";
import type { UserSettings } from "./settings.js";
import { recordFailure, recordSuccess, throttledFor, throttleKeys } from "./throttle.js";
import { newToken, tokenHash } from "./tokens.js";

export interface Session {
  userId: string;
  /** The user's stream (their address is not kept with the session: userEmails opens it). */
  stream: string;
  tenantId: string;
  role: Role;
  createdAt: Date;
  expiresAt: Date;
}

export type SignInOutcome =
  | { status: "signed_in"; token: string; session: Session; position: bigint }
  /** Wrong address or password, or an account without a password or a tenant: never which. */
  | { status: "refused" }
  | { status: "throttled"; retryAfterSeconds: number };

/**
 * Checks the address and password and opens a session in the user's tenant (the one named, or
 * the one they joined first). Failures slow down the client address that makes them
 * (throttle.ts); while it waits, sign-in is refused whatever the password.
 */
export async function signIn(
  store: EventStore,
  db: Kysely<UsersSchema>,
  keys: DataKeys,
  /** `now` is the clock of the throttle (tests move it; the service leaves it out). */
  input: { email: string; password: string; address: string; tenantId?: string; now?: Date },
  settings: UserSettings,
  metadata: Omit<EventMetadata, "causedBy">,
): Promise<SignInOutcome> {
  let email: string;
  try {
    email = normaliseEmail(input.email);
  } catch (error) {
    if (!(error instanceof InvalidEmailError)) throw error;
    email = input.email.trim().toLowerCase();
  }
  const index = await emailIndex(db, keys, email);
  const throttle = throttleKeys(index, input.address);
  const wait = await throttledFor(db, throttle, input.now);
  if (wait > 0) return { status: "throttled", retryAfterSeconds: wait };

  // By blind index: today's stream name, or the SHA-256 one of an account made before sealing.
  const account = await db
    .selectFrom("user_account")
    .leftJoin("user_credential", "user_credential.user_id", "user_account.user_id")
    .select(["user_account.user_id", "user_account.stream", "user_credential.password_hash"])
    .where("user_account.stream", "in", [streams.user(index), streams.legacyUser(email)])
    .executeTakeFirst();
  const matches = account?.password_hash
    ? await passwordMatches(account.password_hash, input.password)
    : await spendPasswordCheck(input.password);
  const role = matches
    ? await db
        .selectFrom("user_role")
        .select(["tenant_id", "role"])
        .where("user_id", "=", account!.user_id)
        .$if(input.tenantId !== undefined, (q) => q.where("tenant_id", "=", input.tenantId!))
        .orderBy("granted_at")
        .orderBy("tenant_id")
        .executeTakeFirst()
    : undefined;
  if (!account || !role) {
    await recordFailure(db, throttle, input.now);
    return { status: "refused" };
  }
  await recordSuccess(db, throttle, input.now);

  const token = newToken();
  const now = new Date();
  const session: Session = {
    userId: account.user_id,
    stream: account.stream,
    tenantId: role.tenant_id,
    role: role.role,
    createdAt: now,
    expiresAt: new Date(now.getTime() + settings.sessionAbsoluteMs),
  };
  // Ended sessions go when anyone signs in: the table holds live sessions and a few stragglers.
  await db.deleteFrom("user_session").where("expires_at", "<=", now).execute();
  await db
    .insertInto("user_session")
    .values({
      id_hash: tokenHash(token),
      user_id: session.userId,
      tenant_id: session.tenantId,
      created_at: now,
      last_seen_at: now,
      expires_at: session.expiresAt,
    })
    .execute();
  const result = await store.append(
    account.stream,
    [
      newEvent(
        "UserSignedIn",
        { userId: session.userId, tenantId: session.tenantId },
        { ...metadata, causedBy: `user:${session.userId}` },
      ),
    ],
    "stream_exists",
  );
  return { status: "signed_in", token, session, position: result.position };
}

/** Activity moves the idle deadline; writing it on every request would cost a write per read. */
const touchEveryMs = 60_000;

/**
 * The live session of a token: null when unknown, idle too long, past its absolute end, or when
 * its user no longer has a role in its tenant. The role is read afresh: a changed role applies
 * to the next request.
 */
export async function findSession(
  db: Kysely<UsersSchema>,
  token: string,
  settings: UserSettings,
  now = new Date(),
): Promise<Session | null> {
  const idHash = tokenHash(token);
  const row = await db
    .selectFrom("user_session as s")
    .innerJoin("user_role as r", (join) =>
      join.onRef("r.user_id", "=", "s.user_id").onRef("r.tenant_id", "=", "s.tenant_id"),
    )
    .innerJoin("user_account as a", "a.user_id", "s.user_id")
    .select([
      "s.user_id",
      "s.tenant_id",
      "s.created_at",
      "s.last_seen_at",
      "s.expires_at",
      "r.role",
      "a.stream",
    ])
    .where("s.id_hash", "=", idHash)
    .executeTakeFirst();
  if (!row) return null;
  const idleUntil = row.last_seen_at.getTime() + settings.sessionIdleMs;
  if (row.expires_at.getTime() <= now.getTime() || idleUntil <= now.getTime()) {
    await db.deleteFrom("user_session").where("id_hash", "=", idHash).execute();
    return null;
  }
  if (now.getTime() - row.last_seen_at.getTime() >= touchEveryMs) {
    await db.updateTable("user_session").set({ last_seen_at: now }).where("id_hash", "=", idHash).execute();
  }
  return {
    userId: row.user_id,
    stream: row.stream,
    tenantId: row.tenant_id,
    role: row.role,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

/** Ends this session, or every session of its user ("sign out everywhere"). */
export async function signOut(
  store: EventStore,
  db: Kysely<UsersSchema>,
  input: { token: string; session: Session; everywhere: boolean },
  metadata: Omit<EventMetadata, "causedBy">,
): Promise<bigint> {
  const { session } = input;
  if (input.everywhere) {
    await db.deleteFrom("user_session").where("user_id", "=", session.userId).execute();
  } else {
    await db.deleteFrom("user_session").where("id_hash", "=", tokenHash(input.token)).execute();
  }
  const result = await store.append(
    session.stream,
    [
      newEvent(
        "UserSignedOut",
        { userId: session.userId, tenantId: session.tenantId, everywhere: input.everywhere },
        { ...metadata, causedBy: `user:${session.userId}` },
      ),
    ],
    "stream_exists",
  );
  return result.position;
}
