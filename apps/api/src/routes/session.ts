import { readTenant } from "@dmarc-ledger/tenancy";
import {
  csrfTokenOf,
  InvalidPasswordLinkError,
  setPassword,
  signIn,
  signOut,
  type UsersSchema,
  userEmails,
  WeakPasswordError,
} from "@dmarc-ledger/users";
import type { Kysely } from "kysely";
import { ApiError, badParameter } from "../api-error.js";
import type { Endpoint } from "../endpoints.js";
import { roleCapabilities } from "../middleware/authenticate.js";
import { optionalField, requiredField } from "../params/form-field.js";
import { awaitProjection } from "../read-your-writes.js";
import { sessionCookie } from "../session-cookie.js";
import type { ApiContext } from "../state.js";

export const usersDb = (ctx: ApiContext) => ctx.deps.db as unknown as Kysely<UsersSchema>;

/** The data keys people's addresses are sealed with and found by (docs/privacy.md, "People"). */
export function peopleKeys(ctx: ApiContext) {
  if (!ctx.deps.dataKeys) {
    throw new ApiError(503, "no_data_keys", "This process was started without the keys of personal data.");
  }
  return ctx.deps.dataKeys;
}

/** The same answer for an unknown address, a wrong password and an account without access. */
const refused = () => new ApiError(401, "sign_in_refused", "The e-mail address or the password is wrong.");

/** "45 seconds", "3 minutes": a throttled sign-in's waits run from seconds to 15 minutes. */
function waitInWords(seconds: number): string {
  if (seconds < 60) return `${seconds} second${seconds === 1 ? "" : "s"}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minute${minutes === 1 ? "" : "s"}`;
}

/** What the dashboard needs to know about its caller; keys get the same shape. */
async function describeCaller(ctx: ApiContext) {
  const holder = ctx.state.holder!;
  const tenant = await readTenant(ctx.deps.store, holder.tenantId);
  const session = holder.session;
  const email = session
    ? ((await userEmails(usersDb(ctx), peopleKeys(ctx), [session.session.userId])).get(
        session.session.userId,
      ) ?? null)
    : null;
  return {
    status: "SUCCESS",
    kind: session ? "session" : "key",
    tenant: { id: tenant.tenantId, name: tenant.name, region: tenant.region },
    user: session ? { id: session.session.userId, email } : null,
    role: session?.session.role ?? null,
    capabilities: holder.capabilities,
    csrf_token: session ? csrfTokenOf(session.token) : null,
    expires_at: session?.session.expiresAt.toISOString() ?? null,
    report_addresses: ctx.deps.reportAddresses ?? [],
    mail_intake: ctx.deps.mailIntake ?? null,
  };
}

export const signInEndpoint: Endpoint = {
  name: "sign_in",
  method: "PUT",
  scope: "public",
  summary:
    "Signs a person in to the dashboard (form fields email, password): sets the session cookie and answers the CSRF token for writes.",
  handler: async (ctx) => {
    const email = requiredField(ctx, "email");
    const password = requiredField(ctx, "password");
    const outcome = await signIn(
      ctx.deps.store,
      usersDb(ctx),
      peopleKeys(ctx),
      { email, password, address: ctx.ip },
      ctx.deps.users,
      { correlationId: ctx.state.requestId },
    );
    if (outcome.status === "throttled") {
      throw new ApiError(
        429,
        "sign_in_throttled",
        `Too many failed sign-ins from your address; try again in ${waitInWords(outcome.retryAfterSeconds)}.`,
        { "Retry-After": String(outcome.retryAfterSeconds) },
      );
    }
    if (outcome.status === "refused") throw refused();
    sessionCookie.set(ctx, outcome.token, outcome.session.expiresAt);
    ctx.state.holder = {
      tenantId: outcome.session.tenantId,
      capabilities: roleCapabilities[outcome.session.role],
      causedBy: `user:${outcome.session.userId}`,
      session: { token: outcome.token, session: outcome.session },
    };
    ctx.body = await describeCaller(ctx);
  },
};

export const sessionEndpoint: Endpoint = {
  name: "session",
  method: "GET",
  scope: "read",
  summary:
    "Who is calling: the tenant, the signed-in person and their role (or the key's scopes), and the session's CSRF token.",
  handler: async (ctx) => {
    ctx.body = await describeCaller(ctx);
  },
};

export const signOutEndpoint: Endpoint = {
  name: "sign_out",
  method: "PUT",
  scope: "read",
  summary: "Ends this session, or with everywhere=true every session of the signed-in person.",
  handler: async (ctx) => {
    const session = ctx.state.holder!.session;
    if (!session) throw new ApiError(400, "not_signed_in", "Keys do not sign out; revoke the key instead.");
    const everywhere = optionalField(ctx, "everywhere");
    if (everywhere !== undefined && everywhere !== "true" && everywhere !== "false") {
      throw badParameter("everywhere", 'must be "true" or "false".');
    }
    await signOut(
      ctx.deps.store,
      usersDb(ctx),
      { token: session.token, session: session.session, everywhere: everywhere === "true" },
      { correlationId: ctx.state.requestId },
    );
    sessionCookie.clear(ctx);
    ctx.body = { status: "SUCCESS" };
  },
};

export const setPasswordEndpoint: Endpoint = {
  name: "set_password",
  method: "PUT",
  scope: "public",
  summary:
    "Sets a password through a one-time link's token (form fields token, password); every session of the person ends.",
  handler: async (ctx) => {
    const token = requiredField(ctx, "token");
    const password = requiredField(ctx, "password");
    try {
      const done = await setPassword(
        ctx.deps.store,
        usersDb(ctx),
        peopleKeys(ctx),
        { token, password },
        { correlationId: ctx.state.requestId },
      );
      await awaitProjection(ctx, done.position);
      ctx.body = { status: "SUCCESS", email: done.email };
    } catch (error) {
      if (error instanceof InvalidPasswordLinkError) throw new ApiError(400, "invalid_link", error.message);
      if (error instanceof WeakPasswordError) throw badParameter("password", error.message);
      throw error;
    }
  },
};
