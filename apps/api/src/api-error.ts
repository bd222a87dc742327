/** An error the client is meant to see: its status, code and sentence go out as JSON. */
export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const badParameter = (parameter: string, message: string) =>
  new ApiError(400, "invalid_parameter", `Parameter "${parameter}": ${message}`);

/**
 * 413, the same answer whether Content-Length said so at once or the limit was passed while the
 * body streamed in (chunked). The rest of the body is not read: the connection cannot be reused.
 */
export const bodyTooLarge = (what: string, limit: number, setting: string) =>
  new ApiError(413, "body_too_large", `${what} are limited to ${limit} bytes (${setting}).`, {
    Connection: "close",
  });
