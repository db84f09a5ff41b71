import type { ComponentChildren, Ref } from "preact";
import { useRef, useState } from "preact/hooks";
import { virtualWindow } from "../model/virtual-window.js";
import { useSize } from "./hooks.js";
import { ScrollRegion } from "./scroll-region.js";

export interface VirtualListProps {
  readonly count: number;
  readonly rowHeight: number;
  /** Renders row `index` (an element of height `rowHeight`). */
  readonly renderRow: (index: number, active: boolean) => ComponentChildren;
  /** Accessible name of the list. */
  readonly label: string;
  /**
   * Enter (or a click) on a row. Given: the list is a listbox whose rows are options; keyboard moves
   * the active row. Not given: a scrolling region of rows (which may hold their own controls).
   */
  readonly onActivate?: (index: number) => void;
  readonly className?: string;
  /** Prefix of the row ids (for aria-activedescendant). */
  readonly id?: string;
}

/**
 * A scrolling list that renders only the rows in view (plus a few), so 10,000 rows cost a screenful.
 * Keyboard: Tab focuses it; ↑/↓, PageUp/PageDown, Home/End move the active row (listbox) or scroll
 * (region); Enter opens the active row.
 */
export function VirtualList(props: VirtualListProps) {
  const ref = useRef<HTMLElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [active, setActive] = useState(-1);
  const { height } = useSize(ref);
  const win = virtualWindow(props.count, props.rowHeight, scrollTop, height || 600);
  const selectable = props.onActivate !== undefined;
  const idPrefix = props.id ?? "vlist";
  const move = (to: number) => {
    const next = Math.max(0, Math.min(props.count - 1, to));
    setActive(next);
    const el = ref.current;
    if (!el) return;
    const top = next * props.rowHeight;
    if (top < el.scrollTop) el.scrollTop = top;
    else if (top + props.rowHeight > el.scrollTop + el.clientHeight)
      el.scrollTop = top + props.rowHeight - el.clientHeight;
  };
  const page = Math.max(1, Math.floor((height || 600) / props.rowHeight) - 1);
  const onKeyDown = (e: KeyboardEvent) => {
    if (!selectable || e.target !== ref.current) return;
    const keys: Record<string, () => void> = {
      ArrowDown: () => move(active + 1),
      ArrowUp: () => move(active - 1),
      PageDown: () => move(active + page),
      PageUp: () => move(active - page),
      Home: () => move(0),
      End: () => move(props.count - 1),
      Enter: () => active >= 0 && props.onActivate?.(active),
    };
    const action = keys[e.key];
    if (action) {
      e.preventDefault();
      action();
    }
  };
  const rows: ComponentChildren[] = [];
  for (let i = win.start; i < win.end; i++) {
    const style = { height: `${props.rowHeight}px` };
    rows.push(
      selectable ? (
        // biome-ignore lint/a11y/useFocusableInteractive: focus stays on the listbox (aria-activedescendant).
        // biome-ignore lint/a11y/useKeyWithClickEvents: the listbox handles the keys.
        <div
          key={i}
          role="option"
          id={`${idPrefix}-row-${i}`}
          aria-selected={i === active}
          class={i === active ? "vrow active" : "vrow"}
          style={style}
          onClick={() => {
            setActive(i);
            props.onActivate?.(i);
          }}
        >
          {props.renderRow(i, i === active)}
        </div>
      ) : (
        <div key={i} class="vrow" style={style}>
          {props.renderRow(i, false)}
        </div>
      ),
    );
  }
  const body = [
    <div key="top" style={{ height: `${win.padTop}px` }} aria-hidden="true" />,
    ...rows,
    <div key="bottom" style={{ height: `${win.padBottom}px` }} aria-hidden="true" />,
  ];
  const onScroll = (e: Event) => setScrollTop((e.currentTarget as HTMLElement).scrollTop);
  const className = `vlist ${props.className ?? ""}`;
  if (selectable) {
    return (
      <div
        ref={ref as Ref<HTMLDivElement>}
        class={className}
        role="listbox"
        aria-label={props.label}
        tabIndex={0}
        onScroll={onScroll}
        onKeyDown={onKeyDown}
        aria-activedescendant={active >= 0 ? `${idPrefix}-row-${active}` : undefined}
      >
        {body}
      </div>
    );
  }
  return (
    <ScrollRegion regionRef={ref} className={className} label={props.label} onScroll={onScroll}>
      {body}
    </ScrollRegion>
  );
}
