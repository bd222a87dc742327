import type { Next } from "koa";
import type { ApiContext } from "../state.js";

/**
 * The API's answers carry a tenant's data: no cache (a browser's, a proxy's) keeps them, and no
 * browser reads them as anything but what their Content-Type says (a JSON answer that holds a
 * reporter's text is never run as HTML). Set on errors too.
 */
export async function noStoreApiAnswers(ctx: ApiContext, next: Next): Promise<void> {
  try {
    await next();
  } finally {
    if (ctx.path === "/api" || ctx.path.startsWith("/api/")) {
      ctx.set("Cache-Control", "no-store");
      ctx.set("X-Content-Type-Options", "nosniff");
    }
  }
}
