import type { ApiConfig } from "./config.js";
import type { ApiContext } from "./state.js";

/**
 * The session cookie: httpOnly (no script reads it), SameSite=Lax (not sent with another site's
 * requests, but with a link followed to us), Secure when the service is reached over https
 * (PUBLIC_BASE_URL), then under the `__Host-` prefix, which browsers only accept from a secure
 * origin, for the whole host and no other.
 */
/**
 * Behind a proxy that ends TLS, the connection to us is plain http: the cookie library would
 * refuse a Secure cookie on it. PUBLIC_BASE_URL says how clients reach us; that decides.
 */
function allowSecure(ctx: ApiContext): void {
  if (ctx.deps.config.secureCookies) (ctx.cookies as { secure?: boolean }).secure = true;
}

export const sessionCookie = {
  name: (config: Pick<ApiConfig, "secureCookies">) =>
    config.secureCookies ? "__Host-dl_session" : "dl_session",

  set(ctx: ApiContext, token: string, expiresAt: Date): void {
    const { config } = ctx.deps;
    allowSecure(ctx);
    ctx.cookies.set(this.name(config), token, {
      httpOnly: true,
      sameSite: "lax",
      secure: config.secureCookies,
      path: "/",
      expires: expiresAt,
      overwrite: true,
    });
  },

  clear(ctx: ApiContext): void {
    const { config } = ctx.deps;
    allowSecure(ctx);
    ctx.cookies.set(this.name(config), "", {
      httpOnly: true,
      sameSite: "lax",
      secure: config.secureCookies,
      path: "/",
      expires: new Date(0),
      overwrite: true,
    });
  },
};
