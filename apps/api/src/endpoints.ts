import type { Next } from "koa";
import type { ApiContext, Capability } from "./state.js";

export type Handler = (ctx: ApiContext, next: Next) => Promise<void>;

export interface Endpoint {
  /** The name the root links under; also the path below /api/. */
  name: string;
  /** POST endpoints take a raw body (no form parsing): the report upload. DELETE: query only. */
  method: "GET" | "PUT" | "POST" | "DELETE";
  /** What the caller needs; `public` endpoints answer without a key or session (signing in). */
  scope: Capability | "public";
  summary: string;
  handler: Handler;
}
