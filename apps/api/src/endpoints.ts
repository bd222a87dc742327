import type { Scope } from "@dmarc-ledger/events";
import type { Next } from "koa";
import type { ApiContext } from "./state.js";

export type Handler = (ctx: ApiContext, next: Next) => Promise<void>;

export interface Endpoint {
  /** The name the root links under; also the path below /api/. */
  name: string;
  method: "GET" | "PUT";
  scope: Scope;
  summary: string;
  handler: Handler;
}
