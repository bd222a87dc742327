import { expect } from "vitest";
import { cli } from "./service-harness.js";

/** An answer of the API, its body parsed when it is JSON. */
export interface Answer {
  status: number;
  json: Record<string, unknown>;
  headers: Headers;
}

/**
 * A person at the dashboard, as the browser would be: the session cookie kept from sign-in and
 * sent back, and the CSRF token sent with writes (unless a test leaves it out).
 */
export class DashboardSession {
  cookie: string | null = null;
  csrfToken: string | null = null;

  constructor(readonly apiRoot: string) {}

  async request(
    method: string,
    path: string,
    options: { form?: Record<string, string>; body?: Uint8Array; csrf?: string | null } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = {};
    if (this.cookie) headers.Cookie = this.cookie;
    const csrf = options.csrf === undefined ? this.csrfToken : options.csrf;
    if (csrf && method !== "GET") headers["X-CSRF-Token"] = csrf;
    const response = await fetch(new URL(path, this.apiRoot), {
      method,
      headers,
      body: options.form ? new URLSearchParams(options.form) : options.body,
    });
    const text = await response.text();
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(text);
    } catch {
      // Not JSON (a static file): the status says enough.
    }
    return { status: response.status, json, headers: response.headers };
  }

  get = (path: string) => this.request("GET", path);
  put = (path: string, form: Record<string, string>, csrf?: string | null) =>
    this.request("PUT", path, { form, csrf });

  async signIn(email: string, password: string): Promise<Answer> {
    const answer = await this.request("PUT", "sign_in", { form: { email, password } });
    const setCookie = answer.headers.get("set-cookie");
    if (answer.status === 200 && setCookie) {
      this.cookie = setCookie.split(";")[0]!;
      this.csrfToken = answer.json.csrf_token as string;
    }
    return answer;
  }
}

/** The token of a set-password link (it rides in the fragment). */
export const linkToken = (url: string) => new URL(url).hash.replace(/^#token=/, "");

/**
 * Adds a person with `dmarc-ledger user add` and sets their password through the API, as the
 * person would by opening the link.
 */
export async function addPerson(
  env: NodeJS.ProcessEnv,
  apiRoot: string,
  tenant: string,
  email: string,
  role: "admin" | "viewer",
  password: string,
): Promise<{ userId: string; link: string }> {
  const added = await cli(env, "user", "add", tenant, email, "--role", role, "--json");
  expect(added.code, added.err).toBe(0);
  const { userId, setPasswordUrl } = JSON.parse(added.out) as { userId: string; setPasswordUrl: string };
  const set = await new DashboardSession(apiRoot).put("set_password", {
    token: linkToken(setPasswordUrl),
    password,
  });
  expect(set.status, JSON.stringify(set.json)).toBe(200);
  return { userId, link: setPasswordUrl };
}
