import type { Role } from "@dmarc-ledger/events";
import type { ColumnType, Generated } from "kysely";

// The read side, written by the users projection from the events.

export interface UserAccountTable {
  user_id: string;
  /**
   * The address as UserCreated holds it, JSON of its envelope: sealed under the person's key
   * (`{"sealed":…}`), or `{"clear":…}` for a user made before addresses were sealed.
   */
  sealed_email: string;
  /**
   * The user's stream, `user-<blind index of the address>` (`user-<sha256>` for users made
   * before): what sign-in finds an account by, never the address.
   */
  stream: string;
  created_at: Date;
  /** Whether the user has chosen a password (UserPasswordSet). */
  password_set: boolean;
}

export interface UserRoleTable {
  user_id: string;
  tenant_id: string;
  role: Role;
  granted_at: Date;
  last_sign_in_at: Date | null;
}

/** Who did what to a tenant's people and keys, for the dashboard's settings. */
export interface TenantActivityTable {
  /** The event's position in the store (decimal text: int8 reads back as a string or a number). */
  position: ColumnType<string, string, string>;
  tenant_id: string;
  event_type: string;
  /** The user or key the event is about. */
  subject: string;
  caused_by: string;
  recorded_at: Date;
}

// The secrets and the sessions, written here directly: "checked a password" and "still signed
// in" are no facts to replay, and a secret in an event could never be erased.

export interface UserCredentialTable {
  user_id: string;
  /** argon2id, PHC string. */
  password_hash: string;
  set_at: ColumnType<Date, Date | undefined, Date>;
}

export interface UserPasswordLinkTable {
  /** SHA-256 of the link's token: the token itself is only ever in the link. */
  token_hash: string;
  user_id: string;
  /** The user's stream: the link works before the read model shows them. */
  stream: string;
  tenant_id: string;
  expires_at: Date;
  created_at: ColumnType<Date, Date | undefined, never>;
}

export interface UserSessionTable {
  /** SHA-256 of the session token (the cookie's value). */
  id_hash: string;
  user_id: string;
  tenant_id: string;
  created_at: Date;
  last_seen_at: Date;
  /** The absolute end, whatever the activity. */
  expires_at: Date;
}

export interface SignInThrottleTable {
  /**
   * `account:<blind index of the address>`, `address:<client address>`, `pair:<hash of both>`
   * (failures of one account from one address), or `familiar:<hash of both>` (a sign-in
   * succeeded there: `window_started_at` is when, `failures` 0).
   */
  key: string;
  failures: number;
  window_started_at: Date;
  last_failed_at: Date;
}

export interface UsersSchema {
  user_account: UserAccountTable;
  user_role: UserRoleTable;
  tenant_activity: TenantActivityTable;
  user_credential: UserCredentialTable;
  user_password_link: UserPasswordLinkTable;
  user_session: UserSessionTable;
  sign_in_throttle: SignInThrottleTable;
}

export type { Generated };
