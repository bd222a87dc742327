import type { Role } from "@dmarc-ledger/events";
import {
  addUser,
  changeRole,
  InvalidEmailError,
  issuePasswordLink,
  LastAdminError,
  listTenantUsers,
  removeUser,
  setPasswordUrl,
  tenantActivity,
  UnknownUserError,
  userEmails,
} from "@dmarc-ledger/users";
import { ApiError, badParameter } from "../api-error.js";
import { callerMeta } from "../caller-meta.js";
import type { Endpoint } from "../endpoints.js";
import { requiredField } from "../params/form-field.js";
import { parsePageParams } from "../params/page-params.js";
import { awaitProjection } from "../read-your-writes.js";
import type { ApiContext } from "../state.js";
import { peopleKeys, usersDb } from "./session.js";

function roleField(ctx: ApiContext): Role {
  const role = requiredField(ctx, "role");
  if (role !== "admin" && role !== "viewer") throw badParameter("role", 'must be "admin" or "viewer".');
  return role;
}

/** Errors of the people commands as the API says them. */
async function answering<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof UnknownUserError) throw new ApiError(404, "unknown_user", error.message);
    if (error instanceof LastAdminError) throw new ApiError(409, "last_admin", error.message);
    if (error instanceof InvalidEmailError) throw badParameter("email", error.message);
    throw error;
  }
}

export const usersEndpoint: Endpoint = {
  name: "users",
  method: "GET",
  scope: "admin",
  summary: "The people of this account: address, role, whether they chose a password, last sign-in.",
  handler: async (ctx) => {
    parsePageParams(ctx.query);
    const users = await listTenantUsers(usersDb(ctx), peopleKeys(ctx), ctx.state.holder!.tenantId);
    ctx.body = {
      status: "SUCCESS",
      total: users.length,
      records: users.map((user) => ({
        UserId: user.userId,
        // A person whose key is gone (being removed): their address reads as removed.
        Email: user.email ?? "(removed)",
        Role: user.role,
        PasswordSet: user.passwordSet,
        Added: user.grantedAt.toISOString(),
        LastSignIn: user.lastSignInAt?.toISOString() ?? null,
      })),
    };
  },
};

export const addUserEndpoint: Endpoint = {
  name: "add_user",
  method: "PUT",
  scope: "admin",
  summary:
    "Adds a person (form fields email, role: admin or viewer), or changes their role, and answers a one-time set-password link.",
  handler: async (ctx) => {
    const email = requiredField(ctx, "email");
    const role = roleField(ctx);
    const added = await answering(() =>
      addUser(
        ctx.deps.store,
        usersDb(ctx),
        peopleKeys(ctx),
        { tenantId: ctx.state.holder!.tenantId, email, role, linkTtlMs: ctx.deps.users.passwordLinkTtlMs },
        callerMeta(ctx),
      ),
    );
    await awaitProjection(ctx, added.position);
    ctx.body = {
      status: "SUCCESS",
      user_id: added.userId,
      email: added.email,
      outcome: added.outcome,
      set_password_url: setPasswordUrl(ctx.deps.config.dashboardUrl, added.link),
      expires_at: added.link.expiresAt.toISOString(),
    };
  },
};

export const userRoleEndpoint: Endpoint = {
  name: "user_role",
  method: "PUT",
  scope: "admin",
  summary: "Changes a person's role (form fields user_id, role); the account keeps at least one admin.",
  handler: async (ctx) => {
    const userId = requiredField(ctx, "user_id");
    const role = roleField(ctx);
    const position = await answering(() =>
      changeRole(
        ctx.deps.store,
        usersDb(ctx),
        { tenantId: ctx.state.holder!.tenantId, userId, role },
        callerMeta(ctx),
      ),
    );
    await awaitProjection(ctx, position);
    ctx.body = { status: "SUCCESS" };
  },
};

export const removeUserEndpoint: Endpoint = {
  name: "remove_user",
  method: "PUT",
  scope: "admin",
  summary:
    "Takes a person out of this account (form field user_id); their sessions here end. A person of no other account is erased: their address can never be read again.",
  handler: async (ctx) => {
    const userId = requiredField(ctx, "user_id");
    const { position, erased } = await answering(() =>
      removeUser(
        ctx.deps.store,
        usersDb(ctx),
        { tenantId: ctx.state.holder!.tenantId, userId },
        callerMeta(ctx),
      ),
    );
    await awaitProjection(ctx, position);
    ctx.body = { status: "SUCCESS", erased };
  },
};

export const passwordLinkEndpoint: Endpoint = {
  name: "password_link",
  method: "PUT",
  scope: "admin",
  summary: "A new one-time set-password link for a person of this account (form field user_id).",
  handler: async (ctx) => {
    const userId = requiredField(ctx, "user_id");
    const link = await answering(() =>
      issuePasswordLink(
        ctx.deps.store,
        usersDb(ctx),
        peopleKeys(ctx),
        { tenantId: ctx.state.holder!.tenantId, userId, linkTtlMs: ctx.deps.users.passwordLinkTtlMs },
        callerMeta(ctx),
      ),
    );
    await awaitProjection(ctx, link.position);
    ctx.body = {
      status: "SUCCESS",
      email: link.email,
      set_password_url: setPasswordUrl(ctx.deps.config.dashboardUrl, link),
      expires_at: link.expiresAt.toISOString(),
    };
  },
};

export const activityEndpoint: Endpoint = {
  name: "activity",
  method: "GET",
  scope: "admin",
  summary: "What was done to this account's people and keys, and by whom, newest first.",
  handler: async (ctx) => {
    const { page, perPage } = parsePageParams(ctx.query);
    const trail = await tenantActivity(usersDb(ctx), { tenantId: ctx.state.holder!.tenantId, page, perPage });
    const ids = trail.records.flatMap((record) =>
      [record.subject, record.causedBy].filter((who) => who.startsWith("user:")).map((who) => who.slice(5)),
    );
    const emails = await userEmails(usersDb(ctx), peopleKeys(ctx), [...new Set(ids)]);
    const named = (who: string) => (who.startsWith("user:") ? (emails.get(who.slice(5)) ?? null) : null);
    ctx.body = {
      status: "SUCCESS",
      total: trail.total,
      records: trail.records.map((record) => ({
        Event: record.event,
        Subject: record.subject,
        SubjectEmail: named(record.subject),
        CausedBy: record.causedBy,
        CausedByEmail: named(record.causedBy),
        Time: record.time.toISOString(),
      })),
    };
  },
};
