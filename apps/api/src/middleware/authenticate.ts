import type { Role } from "@dmarc-ledger/events";
import { findApiKey, hashApiKey, regionOfKey } from "@dmarc-ledger/tenancy";
import { csrfTokenOf, findSession, sameToken, type UsersSchema } from "@dmarc-ledger/users";
import type { Next } from "koa";
import type { Kysely } from "kysely";
import { ApiError } from "../api-error.js";
import { sessionCookie } from "../session-cookie.js";
import type { ApiContext, Capability } from "../state.js";

const unauthorized = (message: string) =>
  new ApiError(401, "unauthorized", message, { "WWW-Authenticate": 'Bearer realm="dmarc-ledger"' });

/** A role's capabilities: an admin does every write, and manages people and keys. */
export const roleCapabilities: Record<Role, readonly Capability[]> = {
  admin: ["read", "write", "ingest", "admin"],
  viewer: ["read"],
};

/**
 * Finds the caller: an API key in `Authorization: Bearer`, else a session cookie. The verdict is
 * kept in the state rather than thrown, so that the rate limiter counts failed attempts too;
 * requireAuthentication raises it.
 */
export async function identify(ctx: ApiContext, next: Next): Promise<void> {
  const header = ctx.get("Authorization");
  const cookie = ctx.cookies.get(sessionCookie.name(ctx.deps.config));
  if (!header && cookie) {
    const session = await findSession(ctx.deps.db as unknown as Kysely<UsersSchema>, cookie, ctx.deps.users);
    if (session) {
      ctx.state.holder = {
        tenantId: session.tenantId,
        capabilities: roleCapabilities[session.role],
        causedBy: `user:${session.userId}`,
        session: { token: cookie, session },
      };
    } else {
      // An ended session's cookie goes, so that the browser stops sending it.
      sessionCookie.clear(ctx);
      ctx.state.authError = unauthorized("Your session has ended; sign in again.");
    }
    return next();
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) {
    ctx.state.authError = unauthorized(
      "Send your API key as: Authorization: Bearer <key> (or sign in to the dashboard).",
    );
  } else {
    const key = match[1]!;
    const { region, otherRegionBaseUrl } = ctx.deps.config;
    const keyRegion = regionOfKey(key);
    if (keyRegion && keyRegion !== region) {
      ctx.state.authError = new ApiError(
        421,
        "wrong_region",
        `This key belongs to the ${keyRegion} region; send it to ${otherRegionBaseUrl ?? `the ${keyRegion} API root`}.`,
      );
    } else {
      const holder = keyRegion ? await findApiKey(ctx.deps.db, hashApiKey(key)) : null;
      if (holder) {
        ctx.state.holder = {
          tenantId: holder.tenantId,
          capabilities: holder.scopes,
          causedBy: `key:${holder.keyId}`,
        };
      } else ctx.state.authError = unauthorized("The API key is unknown or revoked.");
    }
  }
  await next();
}

export function requireAuthentication(publicPaths: ReadonlySet<string>) {
  return async function requireAuthenticationMiddleware(ctx: ApiContext, next: Next): Promise<void> {
    if (!ctx.state.holder && !publicPaths.has(ctx.path)) {
      throw ctx.state.authError ?? unauthorized("Authentication required.");
    }
    await next();
  };
}

const safeMethods = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * A write with a session cookie must carry the session's CSRF token in `X-CSRF-Token`: another
 * site can make a browser send the cookie (SameSite=Lax still allows top-level navigations), but
 * cannot read the token. Keys need none: no browser sends them by itself.
 */
export function requireCsrfToken(publicPaths: ReadonlySet<string>) {
  return async function requireCsrfTokenMiddleware(ctx: ApiContext, next: Next): Promise<void> {
    const session = ctx.state.holder?.session;
    // Signing in and setting a password use no session: a stale cookie beside them changes nothing.
    if (session && !safeMethods.has(ctx.method) && !publicPaths.has(ctx.path)) {
      const given = ctx.get("X-CSRF-Token");
      if (!given || !sameToken(given, csrfTokenOf(session.token))) {
        throw new ApiError(
          403,
          "csrf_token_invalid",
          "This write lacks the session's CSRF token (X-CSRF-Token); reload the page and try again.",
        );
      }
    }
    await next();
  };
}
