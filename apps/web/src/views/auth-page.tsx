import type { ComponentChildren } from "preact";

/** The page of the sign-in and set-password forms: the name, and one form in a card. */
export function AuthPage({ onSubmit, children }: { onSubmit: () => void; children: ComponentChildren }) {
  return (
    <main id="main" class="auth">
      <h1 class="brand brand-large">
        <span class="brand-mark" aria-hidden="true" />
        dmarc-ledger
      </h1>
      <form
        class="auth-card"
        onSubmit={(event) => {
          event.preventDefault();
          onSubmit();
        }}
      >
        {children}
      </form>
    </main>
  );
}
