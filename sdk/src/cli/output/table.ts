import { stripAnsi } from "../cli-io.js";

/**
 * A kubectl-style table: upper-case headers, columns left-aligned and separated by three spaces,
 * no borders, no trailing spaces. Cells may hold colour codes (they do not count for the width).
 */
export function renderTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => stripAnsi(r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell + " ".repeat((widths[i] ?? 0) - stripAnsi(cell).length)))
      .join("   ")
      .trimEnd();
  return [line(headers), ...rows.map((r) => line(headers.map((_, i) => r[i] ?? "")))].join("\n") + "\n";
}

/** A row of a table printed without its header (for `--watch` updates after the first table). */
export function renderRows(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const table = renderTable(headers, rows);
  return table.slice(table.indexOf("\n") + 1);
}

/** Aligned `Key:   value` lines, as in `describe`. */
export function renderFields(fields: readonly (readonly [string, string])[], indent = ""): string {
  const width = Math.max(0, ...fields.map(([k]) => k.length + 1));
  return fields.map(([k, v]) => `${indent}${`${k}:`.padEnd(width)}  ${v}`.trimEnd()).join("\n") + "\n";
}

/**
 * How long ago a time was, in kubectl's style: `45s`, `12m`, `3h`, `5d`; `<unknown>` when unset.
 */
export function age(time: Date | undefined, now: Date): string {
  if (!time) return "<unknown>";
  const seconds = Math.max(0, Math.floor((now.getTime() - time.getTime()) / 1000));
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 120) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours}h`;
  return `${Math.floor(hours / 24)}d`;
}
