import { useState } from "preact/hooks";
import { type ApiError, asApiError } from "../api/client.js";
import { forgetAnswers } from "../api/use-api.js";

/** A write's error, and the read answers forgotten after it succeeds (so the views show it). */
export function useAction() {
  const [error, setError] = useState<ApiError | undefined>();
  const run = async <T,>(work: () => Promise<T>): Promise<T | null> => {
    try {
      const result = await work();
      setError(undefined);
      forgetAnswers();
      return result;
    } catch (caught) {
      setError(asApiError(caught));
      return null;
    }
  };
  return { error, run };
}

/** A secret shown once (a set-password link, a new key), with a button to copy it. */
export function ShownOnce({ label, value, note }: { label: string; value: string; note: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="shown-once" role="status">
      <p>
        <strong>{label}</strong> {note}
      </p>
      <div class="copy-row">
        <input
          type="text"
          readOnly
          value={value}
          aria-label={label}
          onFocus={(e) => (e.currentTarget as HTMLInputElement).select()}
        />
        <button
          type="button"
          class="button"
          onClick={async () => {
            await navigator.clipboard?.writeText(value).catch(() => {});
            setCopied(true);
          }}
        >
          {copied ? "Copied" : "Copy"}
        </button>
      </div>
    </div>
  );
}
