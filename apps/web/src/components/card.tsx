import type { ComponentChildren } from "preact";

/** A titled section of a view. */
export function Card({
  title,
  id,
  actions,
  children,
  wide,
}: {
  title: string;
  id: string;
  actions?: ComponentChildren;
  children: ComponentChildren;
  wide?: boolean;
}) {
  return (
    <section class={`card${wide ? " card-wide" : ""}`} aria-labelledby={id}>
      <div class="card-head">
        <h2 id={id}>{title}</h2>
        {actions ? <div class="card-actions">{actions}</div> : null}
      </div>
      {children}
    </section>
  );
}
