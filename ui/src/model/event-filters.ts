import type { EventJson } from "../api/wire-types.js";

/** Filters of the events view; empty fields do not filter. */
export interface EventFilter {
  /** Substring of the type ("replica.", "node.cordoned"). */
  readonly type: string;
  /** `EVENT_SEVERITY_*`: this severity or worse; "" for all. */
  readonly minSeverity: string;
  readonly workload: string;
  readonly node: string;
  /** Substring of the message. */
  readonly text: string;
}

export const emptyEventFilter: EventFilter = { type: "", minSeverity: "", workload: "", node: "", text: "" };

const rank: Record<string, number> = {
  EVENT_SEVERITY_UNSPECIFIED: 0,
  EVENT_SEVERITY_INFO: 1,
  EVENT_SEVERITY_WARNING: 2,
  EVENT_SEVERITY_ERROR: 3,
};

/** The events matching the filter, newest first. */
export function filterEvents(events: readonly EventJson[], filter: EventFilter): EventJson[] {
  const min = rank[filter.minSeverity] ?? 0;
  const type = filter.type.trim().toLowerCase();
  const workload = filter.workload.trim().toLowerCase();
  const node = filter.node.trim().toLowerCase();
  const text = filter.text.trim().toLowerCase();
  const out: EventJson[] = [];
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (min && (rank[e.severity ?? ""] ?? 0) < min) continue;
    if (type && !(e.type ?? "").toLowerCase().includes(type)) continue;
    if (workload && !(e.workloadId ?? "").toLowerCase().includes(workload)) continue;
    if (node && !(e.nodeId ?? "").toLowerCase().includes(node)) continue;
    if (text && !(e.message ?? "").toLowerCase().includes(text)) continue;
    out.push(e);
  }
  return out;
}
