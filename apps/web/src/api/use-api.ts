import { useEffect, useState } from "preact/hooks";
import { type ApiError, apiGet, apiPath, asApiError, type Query } from "./client.js";

export interface Loaded<T> {
  data: T | undefined;
  error: ApiError | undefined;
  loading: boolean;
}

/**
 * Answers are kept for a short while: going back to a view shows it at once. Any write clears
 * them all (forgetAnswers), so a view never shows what was before the user's own change.
 */
const cache = new Map<string, { at: number; answer: Promise<unknown> }>();
const freshMs = 30_000;
let generation = 0;

export function forgetAnswers(): void {
  cache.clear();
  generation++;
  for (const listener of forgetting) listener();
}
const forgetting = new Set<() => void>();

function cached<T>(path: string, query: Query): Promise<T> {
  const key = apiPath(path, query);
  const hit = cache.get(key);
  if (hit && Date.now() - hit.at < freshMs) return hit.answer as Promise<T>;
  const answer = apiGet<T>(path, query);
  cache.set(key, { at: Date.now(), answer });
  answer.catch(() => cache.delete(key));
  return answer;
}

/** A GET of the API, again whenever its path or query change; `null` asks nothing. */
export function useApi<T>(path: string | null, query: Query = {}): Loaded<T> {
  const key = path === null ? null : apiPath(path, query);
  const [state, setState] = useState<Loaded<T>>({
    data: undefined,
    error: undefined,
    loading: path !== null,
  });
  const [round, setRound] = useState(generation);
  useEffect(() => {
    const again = () => setRound(generation);
    forgetting.add(again);
    return () => forgetting.delete(again);
  }, []);
  useEffect(() => {
    if (path === null) {
      setState({ data: undefined, error: undefined, loading: false });
      return;
    }
    let live = true;
    setState((previous) => ({ ...previous, loading: true }));
    cached<T>(path, query).then(
      (data) => live && setState({ data, error: undefined, loading: false }),
      (error: unknown) =>
        live &&
        setState({
          data: undefined,
          error: asApiError(error),
          loading: false,
        }),
    );
    return () => {
      live = false;
    };
    // The key says everything the request depends on.
  }, [key, round]);
  return state;
}
