import { useState } from "preact/hooks";
import { type ApiError, apiWrite, asApiError } from "../api/client.js";
import type { Caller } from "../api/types.js";
import { ErrorNotice, Notice } from "../components/notice.js";
import { navigate } from "../lib/router.js";
import { AuthPage } from "./auth-page.js";

const minLength = 12;

/** Opened from a one-time link: the token is in the address's fragment, never sent to a server. */
export function SetPassword({ onSignedIn }: { onSignedIn: (caller: Caller) => void }) {
  const token = new URLSearchParams(location.hash.slice(1)).get("token") ?? "";
  const [password, setPassword] = useState("");
  const [again, setAgain] = useState("");
  const [error, setError] = useState<ApiError | undefined>();
  const mismatch = again !== "" && again !== password;
  return (
    <AuthPage
      onSubmit={async () => {
        if (mismatch) return;
        try {
          const { email } = await apiWrite<{ email: string }>("PUT", "set_password", { token, password });
          const caller = await apiWrite<Caller>("PUT", "sign_in", { email, password });
          // The token leaves the address bar and the history.
          navigate("/", { replace: true });
          onSignedIn(caller);
        } catch (caught) {
          setError(asApiError(caught));
        }
      }}
    >
      <h2>Choose your password</h2>
      {token ? null : (
        <Notice kind="error">This address lacks its token: open the link exactly as you received it.</Notice>
      )}
      <label class="field">
        <span>New password (at least {minLength} characters)</span>
        <input
          type="password"
          name="password"
          autoComplete="new-password"
          minLength={minLength}
          required
          value={password}
          onInput={(e) => setPassword((e.currentTarget as HTMLInputElement).value)}
        />
      </label>
      <label class="field">
        <span>The same again</span>
        <input
          type="password"
          name="again"
          autoComplete="new-password"
          required
          value={again}
          aria-invalid={mismatch}
          onInput={(e) => setAgain((e.currentTarget as HTMLInputElement).value)}
        />
      </label>
      {mismatch ? <Notice kind="error">The two passwords differ.</Notice> : null}
      <ErrorNotice error={error} />
      <button type="submit" class="button button-primary" disabled={!token}>
        Set password and sign in
      </button>
    </AuthPage>
  );
}
