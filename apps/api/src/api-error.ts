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
