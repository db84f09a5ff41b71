/** Display helpers shared by the views. */

/** "WORKLOAD_STATE_RUNNING" → "running"; "" → "unspecified". */
export function enumLabel(value: string | undefined, prefix: string): string {
  return (value || `${prefix}UNSPECIFIED`).replace(prefix, "").toLowerCase().replace(/_/g, " ");
}

/** A tone for a state, for colour (always paired with the text, never colour alone). */
export function stateTone(state: string | undefined): "ok" | "warn" | "bad" | "muted" {
  if (!state) return "muted";
  if (/RUNNING$|READY$/.test(state)) return "ok";
  if (/FAILED$|LOST$|ERROR$/.test(state)) return "bad";
  if (/STOPPED$|UNSPECIFIED$/.test(state)) return "muted";
  return "warn";
}

/** Local time with seconds, or "" for none. */
export function time(iso: string | undefined): string {
  if (!iso) return "";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleTimeString(undefined, { hour12: false });
}

/** "1.5 cores", "512 MiB", "2.0 GiB": a resource amount in its unit. */
export function amount(value: number, unit: string): string {
  if (unit === "m") return value >= 1000 ? `${(value / 1000).toFixed(value % 1000 ? 1 : 0)} cores` : `${value}m`;
  if (unit === "MiB" && value >= 1024) return `${(value / 1024).toFixed(1)} GiB`;
  return `${value} ${unit}`;
}
