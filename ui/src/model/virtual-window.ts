/** The rows a virtualised list renders: [start, end) plus the padding above and below them. */
export interface VirtualWindow {
  readonly start: number;
  readonly end: number;
  readonly padTop: number;
  readonly padBottom: number;
}

/**
 * Which of `count` rows of `rowHeight` px are visible in a viewport of `viewport` px scrolled by
 * `scrollTop`, with `overscan` extra rows on each side. Only these are rendered, so 10,000 rows cost
 * as much as a screenful.
 */
export function virtualWindow(
  count: number,
  rowHeight: number,
  scrollTop: number,
  viewport: number,
  overscan = 6,
): VirtualWindow {
  if (count <= 0 || rowHeight <= 0) return { start: 0, end: 0, padTop: 0, padBottom: 0 };
  const first = Math.floor(Math.max(0, scrollTop) / rowHeight);
  const visible = Math.ceil(Math.max(viewport, rowHeight) / rowHeight);
  const start = Math.min(count, Math.max(0, first - overscan));
  const end = Math.min(count, first + visible + overscan);
  return { start, end, padTop: start * rowHeight, padBottom: Math.max(0, (count - end) * rowHeight) };
}

/** Splits items into rows of `columns` (for grids of cards). */
export function chunk<T>(items: readonly T[], columns: number): T[][] {
  const n = Math.max(1, Math.floor(columns));
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += n) out.push(items.slice(i, i + n));
  return out;
}
