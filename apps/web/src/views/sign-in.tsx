import { useState } from "preact/hooks";
import { type ApiError, apiWrite, asApiError } from "../api/client.js";
import type { Caller } from "../api/types.js";
import { ErrorNotice } from "../components/notice.js";
import { AuthPage } from "./auth-page.js";

export function SignIn({ onSignedIn }: { onSignedIn: (caller: Caller) => void }) {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<ApiError | undefined>();
  const [busy, setBusy] = useState(false);
  return (
    <AuthPage
      onSubmit={async () => {
        setBusy(true);
        try {
          onSignedIn(await apiWrite<Caller>("PUT", "sign_in", { email, password }));
        } catch (caught) {
          setError(asApiError(caught));
        } finally {
          setBusy(false);
        }
      }}
    >
      <h2>Sign in</h2>
      <label class="field">
        <span>E-mail address</span>
        <input
          type="email"
          name="email"
          autoComplete="username"
          required
          value={email}
          onInput={(e) => setEmail((e.currentTarget as HTMLInputElement).value)}
        />
      </label>
      <label class="field">
        <span>Password</span>
        <input
          type="password"
          name="password"
          autoComplete="current-password"
          required
          value={password}
          onInput={(e) => setPassword((e.currentTarget as HTMLInputElement).value)}
        />
      </label>
      <ErrorNotice error={error} />
      <button type="submit" class="button button-primary" disabled={busy}>
        {busy ? "Signing in…" : "Sign in"}
      </button>
      <p class="hint">
        No password yet? Open the one-time link an admin of your account sent you (the first start of the
        service prints the first admin's).
      </p>
    </AuthPage>
  );
}
