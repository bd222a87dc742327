import type { ComponentChildren } from "preact";
import type { ApiError } from "../api/client.js";

/** A message for the person: announced to screen readers as it appears. */
export function Notice({
  kind = "info",
  children,
}: {
  kind?: "info" | "error" | "success";
  children: ComponentChildren;
}) {
  return (
    <div class={`notice notice-${kind}`} role={kind === "error" ? "alert" : "status"}>
      {children}
    </div>
  );
}

export function ErrorNotice({ error }: { error: ApiError | undefined }) {
  return error ? <Notice kind="error">{error.message}</Notice> : null;
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="loading" role="status">
      Loading {what}…
    </p>
  );
}
