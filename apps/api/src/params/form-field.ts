import { badParameter } from "../api-error.js";
import type { ApiContext } from "../state.js";

/** A required string field of a form or JSON body. */
export function requiredField(ctx: ApiContext, name: string): string {
  const body = (ctx.request as { body?: unknown }).body;
  const value = body && typeof body === "object" ? (body as Record<string, unknown>)[name] : undefined;
  if (value === undefined || value === null || value === "") throw badParameter(name, "is required.");
  if (typeof value !== "string") throw badParameter(name, "must be a single text value.");
  return value;
}

/** An optional string field of a form or JSON body; undefined when absent or empty. */
export function optionalField(ctx: ApiContext, name: string): string | undefined {
  const body = (ctx.request as { body?: unknown }).body;
  const value = body && typeof body === "object" ? (body as Record<string, unknown>)[name] : undefined;
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string") throw badParameter(name, "must be a single text value.");
  return value;
}
