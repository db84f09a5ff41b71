import type { ComponentChildren, Ref } from "preact";

export interface ScrollRegionProps {
  /** Accessible name of the region. */
  readonly label: string;
  readonly children: ComponentChildren;
  readonly className?: string;
  readonly regionRef?: Ref<HTMLElement>;
  readonly onScroll?: (e: Event) => void;
}

/** A named region that scrolls its overflow and takes keyboard focus, so arrow keys scroll it. */
export function ScrollRegion(props: ScrollRegionProps) {
  const { label, className, regionRef, onScroll } = props;
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus to scroll by keyboard (WCAG 2.1.1).
    <section ref={regionRef} class={`scroll ${className ?? ""}`} aria-label={label} tabIndex={0} onScroll={onScroll}>
      {props.children}
    </section>
  );
}
