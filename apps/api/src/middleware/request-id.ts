import { randomUUID } from "node:crypto";
import type { Next } from "koa";
import type { ApiContext } from "../state.js";

const acceptable = /^[A-Za-z0-9._-]{8,128}$/;

/** Every response carries X-Request-Id: the caller's when it sent a sane one, ours otherwise. */
export async function requestId(ctx: ApiContext, next: Next): Promise<void> {
  const incoming = ctx.get("X-Request-Id");
  ctx.state.requestId = acceptable.test(incoming) ? incoming : randomUUID();
  ctx.set("X-Request-Id", ctx.state.requestId);
  await next();
}
