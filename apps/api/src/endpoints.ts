import type { Scope } from "@dmarc-ledger/events";
import type { Next } from "koa";
import type { ApiContext } from "./state.js";

export type Handler = (ctx: ApiContext, next: Next) => Promise<void>;

export interface Endpoint {
  /** The name the root links under; also the path below /api/. */
  name: string;
  /** POST endpoints take a raw body (no form parsing): the report upload. */
  method: "GET" | "PUT" | "POST";
  scope: Scope;
  summary: string;
  handler: Handler;
}
