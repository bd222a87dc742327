import type { ComponentChildren } from "preact";
import { followLink } from "../lib/router.js";

/** A link within the dashboard: no page load, and the back button returns. */
export function AppLink({
  href,
  children,
  current,
}: {
  href: string;
  children: ComponentChildren;
  current?: boolean;
}) {
  return (
    <a href={href} onClick={followLink} aria-current={current ? "page" : undefined}>
      {children}
    </a>
  );
}
