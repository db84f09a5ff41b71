import type { WorkloadJson } from "../api/wire-types.js";

/** What the workloads list is filtered by; empty fields do not filter. */
export interface WorkloadFilter {
  /** `WORKLOAD_KIND_*` or "". */
  readonly kind: string;
  /** `WORKLOAD_STATE_*` or "". */
  readonly state: string;
  /** Workloads with a replica on this node (substring match). */
  readonly node: string;
  /** Label terms as in the API's label selector: "k=v", "k!=v", "k", "!k", comma-separated. */
  readonly label: string;
  /** Substring of the id. */
  readonly text: string;
}

export const emptyFilter: WorkloadFilter = { kind: "", state: "", node: "", label: "", text: "" };

type LabelTerm = (labels: Record<string, string>) => boolean;

/**
 * Parses label terms ("app=web, tier!=db, canary, !legacy"); `in`/`notin` lists are also read.
 * A malformed term yields an error naming it, so the field can say what is wrong.
 */
export function parseLabelTerms(text: string): { terms: LabelTerm[]; error?: string } {
  const terms: LabelTerm[] = [];
  for (const raw of splitTerms(text)) {
    const term = raw.trim();
    if (!term) continue;
    let m = /^([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term);
    if (m) {
      const [, key, op, list] = m as unknown as [string, string, string, string];
      const values = list.split(",").map((v) => v.trim());
      terms.push(op === "in" ? (l) => values.includes(l[key] ?? "\0") : (l) => !values.includes(l[key] ?? "\0"));
      continue;
    }
    m = /^([\w./-]+)\s*(!=|==|=)\s*([\w./-]*)$/.exec(term);
    if (m) {
      const [, key, op, value] = m as unknown as [string, string, string, string];
      terms.push(op === "!=" ? (l) => l[key] !== value : (l) => l[key] === value);
      continue;
    }
    m = /^(!?)([\w./-]+)$/.exec(term);
    if (m) {
      const [, not, key] = m as unknown as [string, string, string];
      terms.push(not ? (l) => !Object.hasOwn(l, key) : (l) => Object.hasOwn(l, key));
      continue;
    }
    return { terms: [], error: `cannot read label term "${term}"` };
  }
  return { terms };
}

function splitTerms(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of text) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (ch === "," && depth === 0) {
      out.push(current);
      current = "";
    } else current += ch;
  }
  out.push(current);
  return out;
}

/** A predicate for the filter, built once per filter change (it runs over 10,000 workloads). */
export function workloadMatcher(filter: WorkloadFilter): (w: WorkloadJson) => boolean {
  const { terms } = parseLabelTerms(filter.label);
  const text = filter.text.trim().toLowerCase();
  const node = filter.node.trim().toLowerCase();
  return (w) => {
    if (filter.kind && w.kind !== filter.kind) return false;
    if (filter.state && (w.status?.state ?? "WORKLOAD_STATE_UNSPECIFIED") !== filter.state) return false;
    if (text && !w.id.toLowerCase().includes(text)) return false;
    if (node && !(w.status?.replicas ?? []).some((r) => r.nodeId?.toLowerCase().includes(node))) return false;
    if (terms.length > 0) {
      const labels = w.labels ?? {};
      if (!terms.every((t) => t(labels))) return false;
    }
    return true;
  };
}

/** The workloads matching the filter, ordered by id. */
export function filterWorkloads(workloads: Iterable<WorkloadJson>, filter: WorkloadFilter): WorkloadJson[] {
  const match = workloadMatcher(filter);
  const out: WorkloadJson[] = [];
  for (const w of workloads) if (match(w)) out.push(w);
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
