import { useEffect, useState } from "preact/hooks";

/**
 * The app's location is the browser's: every view's state (period, domain, tab, sort, page) is
 * in the URL, so a link shares it and the back button walks it back.
 */
const listeners = new Set<() => void>();
const notify = () => {
  for (const listener of listeners) listener();
};
window.addEventListener("popstate", notify);

export function navigate(url: string, options: { replace?: boolean } = {}): void {
  if (url === location.pathname + location.search) return;
  if (options.replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  notify();
}

export interface AppLocation {
  path: string;
  params: URLSearchParams;
}

function current(): AppLocation {
  return { path: location.pathname, params: new URLSearchParams(location.search) };
}

export function useLocation(): AppLocation {
  const [state, setState] = useState(current);
  useEffect(() => {
    const update = () => setState(current());
    listeners.add(update);
    return () => listeners.delete(update);
  }, []);
  return state;
}

/** The URL with some query parameters changed (null removes one). */
export function withParams(
  changes: Record<string, string | number | null | undefined>,
  base = current(),
): string {
  const params = new URLSearchParams(base.params);
  for (const [name, value] of Object.entries(changes)) {
    if (value === null || value === undefined || value === "") params.delete(name);
    else params.set(name, String(value));
  }
  const search = params.toString();
  return `${base.path}${search ? `?${search}` : ""}`;
}

/** Sets query parameters: a new history entry, so that back undoes it. */
export function setParams(
  changes: Record<string, string | number | null | undefined>,
  replace = false,
): void {
  navigate(withParams(changes), { replace });
}

/** Follows an in-app link without a page load (a modified click opens a tab as usual). */
export function followLink(event: MouseEvent): void {
  const anchor = event.currentTarget as HTMLAnchorElement;
  if (
    event.defaultPrevented ||
    event.button !== 0 ||
    event.metaKey ||
    event.ctrlKey ||
    event.shiftKey ||
    event.altKey
  ) {
    return;
  }
  if (anchor.origin !== location.origin) return;
  event.preventDefault();
  navigate(anchor.pathname + anchor.search);
}
