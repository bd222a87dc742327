/** An error answer of the API: its status, code and sentence. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let csrfToken: string | null = null;

/** Set once the session is known: every write sends it (X-CSRF-Token). */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called when the API says the session ended, so that the app shows the sign-in page. */
let onSignedOut: () => void = () => {};
export function whenSignedOut(callback: () => void): void {
  onSignedOut = callback;
}

export type Query = Record<string, string | number | undefined | null>;

export function apiPath(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== "") params.set(name, String(value));
  }
  const search = params.toString();
  return `/api/${path}${search ? `?${search}` : ""}`;
}

async function answer<T>(response: Response): Promise<T> {
  const body = (await response.json().catch(() => null)) as
    | (T & { status?: string; code?: string; message?: string })
    | null;
  if (!response.ok || !body || body.status === "ERROR") {
    const error = new ApiError(
      response.status,
      body?.code ?? "unreadable",
      body?.message ?? `The service answered ${response.status}.`,
    );
    if (response.status === 401 && error.code === "unauthorized") onSignedOut();
    throw error;
  }
  return body;
}

export async function apiGet<T>(path: string, query: Query = {}, signal?: AbortSignal): Promise<T> {
  const response = await fetch(apiPath(path, query), {
    credentials: "same-origin",
    headers: { Accept: "application/json" },
    ...(signal ? { signal } : {}),
  });
  return answer<T>(response);
}

/** A write: form fields (PUT), or a raw body (POST reports). */
export async function apiWrite<T>(
  method: "PUT" | "POST",
  path: string,
  body: Record<string, string> | Blob,
): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (csrfToken) headers["X-CSRF-Token"] = csrfToken;
  const response = await fetch(apiPath(path), {
    method,
    credentials: "same-origin",
    headers,
    body: body instanceof Blob ? body : new URLSearchParams(body),
  });
  return answer<T>(response);
}

/** Any failure of a request as the API error a view shows (a network failure has status 0). */
export function asApiError(caught: unknown): ApiError {
  return caught instanceof ApiError ? caught : new ApiError(0, "network", String(caught));
}
