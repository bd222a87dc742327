import { existsSync } from "node:fs";
import { join } from "node:path";
import { send } from "@koa/send";
import type { Next } from "koa";
import type { ApiContext } from "../state.js";

/**
 * The dashboard's security headers: scripts and styles from this origin only (ECharts and Preact
 * set styles through the DOM, which style-src does not restrict), no framing, no referrer (the
 * set-password page's address carries a token in its fragment, which no browser sends anyway).
 */
const securityHeaders = {
  "Content-Security-Policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
};

/**
 * Serves the built dashboard (apps/web/dist) at `/`, beside the API at `/api/`. Files under
 * `assets/` carry a hash of their content in their name: cached for a year. Any other path
 * without a file is one of the app's pages (/senders, /set-password): index.html, never cached,
 * so a new build is picked up on the next load. Precompressed copies (.br, .gz) go to clients
 * that take them.
 */
export function dashboardFiles(root: string) {
  const index = join(root, "index.html");
  return async function dashboardFilesMiddleware(ctx: ApiContext, next: Next): Promise<void> {
    if (
      (ctx.method !== "GET" && ctx.method !== "HEAD") ||
      ctx.path === "/api" ||
      ctx.path.startsWith("/api/")
    ) {
      return next();
    }
    ctx.set(securityHeaders);
    const isAsset = ctx.path.startsWith("/assets/");
    const lastSegment = ctx.path.slice(ctx.path.lastIndexOf("/") + 1);
    if (isAsset || lastSegment.includes(".")) {
      const sent = await send(ctx, ctx.path, {
        root,
        immutable: isAsset,
        maxage: isAsset ? 365 * 24 * 3600 * 1000 : 0,
      }).catch((error: { status?: number }) => {
        if (error.status === 404 || error.status === 400 || error.status === 403) return null;
        throw error;
      });
      if (sent) return;
      ctx.status = 404;
      ctx.type = "text/plain";
      ctx.body = "Not found.";
      return;
    }
    if (!existsSync(index)) return next();
    ctx.set("Cache-Control", "no-cache");
    await send(ctx, "index.html", { root });
  };
}
