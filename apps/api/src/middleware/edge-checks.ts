import type { Next } from "koa";
import { ApiError, badParameter } from "../api-error.js";
import type { ApiContext } from "../state.js";

/**
 * The checks every request's parameters pass before any endpoint reads them, so that none of
 * them reaches a query in a shape the database refuses (a NUL byte in a text value was a 500 on
 * 8 endpoints: PostgreSQL's text cannot hold one):
 * - no query parameter, body field or value nested in a JSON body holds a NUL byte (U+0000),
 *   in its name or its value;
 * - a PUT or DELETE body is form fields or a JSON object, not an array or a bare value;
 * - a PUT body names only fields of its endpoint (`fieldsOf`, from the OpenAPI document's table):
 *   any other is refused by name, as unknown query parameters are.
 */
export function edgeChecks(fieldsOf: (path: string) => readonly string[] | undefined) {
  return async (ctx: ApiContext, next: Next): Promise<void> => {
    for (const [name, value] of Object.entries(ctx.query)) {
      if (name.includes("\u0000")) throw nulIn("a parameter name");
      if (holdsNul(value)) throw badParameter(printable(name), "must not hold a NUL byte (U+0000).");
    }
    const body = (ctx.request as { body?: unknown }).body;
    if ((ctx.method === "PUT" || ctx.method === "DELETE") && body !== undefined && ctx.request.length) {
      if (body === null || typeof body !== "object" || Array.isArray(body))
        throw new ApiError(400, "invalid_body", "Send the body as form fields or as one JSON object.");
      const fields = ctx.method === "PUT" ? fieldsOf(ctx.path) : undefined;
      for (const [name, value] of Object.entries(body)) {
        if (name.includes("\u0000")) throw nulIn("a field name");
        if (fields && !fields.includes(name))
          throw badParameter(printable(name), "is not a field of this endpoint.");
        if (holdsNul(value)) throw badParameter(printable(name), "must not hold a NUL byte (U+0000).");
      }
    }
    await next();
  };
}

const nulIn = (where: string) =>
  new ApiError(
    400,
    "invalid_parameter",
    `${where[0]!.toUpperCase()}${where.slice(1)} holds a NUL byte (U+0000).`,
  );

/** A name as an error message may quote it: control characters out, 100 characters at most. */
function printable(name: string): string {
  const shown = name.replace(/[\u0000-\u001f\u007f]/g, "?");
  return shown.length > 100 ? `${shown.slice(0, 100)}…` : shown;
}

/** Whether a text, or any text inside an array or object (a JSON body's), holds U+0000. */
function holdsNul(value: unknown, depth = 0): boolean {
  if (typeof value === "string") return value.includes("\u0000");
  if (value === null || typeof value !== "object") return false;
  // No field of ours nests this deep: refused rather than walked.
  if (depth > 32) throw new ApiError(400, "invalid_body", "The JSON body nests too deep.");
  const entries = Array.isArray(value) ? value : Object.entries(value).flat();
  return entries.some((inner) => holdsNul(inner, depth + 1));
}
