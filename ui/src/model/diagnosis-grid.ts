import type { FilterFailureJson, PlacementDiagnosisJson } from "../api/wire-types.js";

/** A column of the grid: one filter of the scheduler's pipeline (resources: one per dimension). */
export interface GridFilter {
  readonly plugin: string;
  /** Only these reasons of the plugin (the resource dimensions); every reason when absent. */
  readonly reasons?: readonly string[];
  readonly label: string;
  /** Shown even when no recorded node fails it. */
  readonly always: boolean;
}

/**
 * The columns, in the scheduler's filter order (controlplane/src/scheduler/default-pipeline.ts). The
 * filters that only apply to some requests (spread, workload anti-affinity, moves) appear when a
 * recorded node fails them; a plugin not listed here gets a column of its own, after these.
 */
export const gridFilters: readonly GridFilter[] = [
  { plugin: "node-ready", label: "ready", always: true },
  { plugin: "runtime-capability", label: "runtime / capabilities", always: true },
  { plugin: "node-affinity", label: "selector / affinity", always: true },
  { plugin: "topology-spread", label: "spread", always: false },
  { plugin: "resources-fit", reasons: ["INSUFFICIENT_CPU"], label: "cpu", always: true },
  { plugin: "resources-fit", reasons: ["INSUFFICIENT_MEMORY"], label: "memory", always: true },
  { plugin: "resources-fit", reasons: ["INSUFFICIENT_DISK"], label: "disk", always: true },
  { plugin: "host-ports", label: "host ports", always: true },
  { plugin: "replica-anti-affinity", label: "replica anti-affinity", always: true },
  { plugin: "workload-anti-affinity", label: "workload anti-affinity", always: false },
  { plugin: "replica-move", label: "move", always: false },
];

/** One cell: whether the node passed that filter in the decision, and, when not, why with the numbers. */
export interface GridCell {
  readonly pass: boolean;
  /** Empty for a pass; otherwise the recorded reasons, e.g. "need 512 MiB, free 256 MiB of 8192 MiB". */
  readonly detail: string;
}

/** One recorded node's row: a cell per column, its score when it was a top candidate. */
export interface GridRow {
  readonly nodeId: string;
  readonly cells: readonly GridCell[];
  readonly feasible: boolean;
  readonly winner: boolean;
  /** Rank among the recorded candidates (0 = best), or undefined when not among them. */
  readonly candidateRank?: number;
  readonly totalScore?: number;
}

/** The grid of one placement decision, as the scheduler recorded it. */
export interface DiagnosisGrid {
  readonly columns: readonly GridFilter[];
  /** In the recorded order: the candidates best first (the winner first), other scored nodes, then refused ones. */
  readonly rows: readonly GridRow[];
  /** Failing recorded nodes per column (a node failing several filters counts in each). */
  readonly failuresPerColumn: readonly number[];
  readonly feasibleCount: number;
  /** Nodes the scheduler evaluated but did not record (only in the counts): `nodesEvaluated − rows`. */
  readonly unrecorded: number;
}

function columnOf(columns: readonly GridFilter[], f: FilterFailureJson): number {
  return columns.findIndex((c) => c.plugin === f.plugin && (!c.reasons || c.reasons.includes(f.reason ?? "")));
}

/** "NODE_CORDONED" → "node cordoned". */
function words(reason: string | undefined): string {
  return (reason ?? "").toLowerCase().replace(/_/g, " ");
}

/** A failure as cell text: the numbers for resources, otherwise the reason and its subject. */
export function failureText(f: FilterFailureJson): string {
  if (f.plugin === "resources-fit" && f.detail) return f.detail;
  return f.detail ? `${words(f.reason)}: ${f.detail}` : words(f.reason);
}

/**
 * Builds the nodes × filters grid from what the scheduler recorded (`diagnosis.nodes`): a cell is ✗
 * exactly when the scheduler's filter refused that node in that decision, with the filter's numbers,
 * and a node failing several filters fails several columns. Nothing is re-evaluated here, so the grid
 * agrees with the recorded counts and message whatever changed in the cluster since. Only the
 * recorded nodes have rows (at most 64, 16 for a placement); `unrecorded` says how many others are only in the counts.
 */
export function buildDiagnosisGrid(diagnosis: PlacementDiagnosisJson | undefined): DiagnosisGrid {
  const verdicts = diagnosis?.nodes ?? [];
  const columns = [...gridFilters];
  for (const v of verdicts)
    for (const f of v.failures ?? [])
      if (columnOf(columns, f) < 0) columns.push({ plugin: f.plugin ?? "", label: f.plugin ?? "?", always: false });
  const failing = columns.map(() => 0);
  const texts = verdicts.map((v) => {
    const cells: string[][] = columns.map(() => []);
    for (const f of v.failures ?? []) cells[columnOf(columns, f)]!.push(failureText(f));
    cells.forEach((c, i) => {
      if (c.length > 0) failing[i]! += 1;
    });
    return cells;
  });
  const shown = columns.map((c, i) => c.always || failing[i]! > 0);
  const candidates = new Map<string, { rank: number; total: number }>();
  (diagnosis?.candidates ?? []).forEach((c, rank) => {
    if (c.nodeId && !candidates.has(c.nodeId)) candidates.set(c.nodeId, { rank, total: c.totalScore ?? 0 });
  });
  const rows = verdicts.map((v, r): GridRow => {
    const nodeId = v.nodeId ?? "";
    const candidate = candidates.get(nodeId);
    const cells = texts[r]!.flatMap((t, i) => (shown[i] ? [{ pass: t.length === 0, detail: t.join("; ") }] : []));
    return {
      nodeId,
      cells,
      feasible: (v.failures ?? []).length === 0,
      winner: nodeId !== "" && nodeId === diagnosis?.winnerNodeId,
      ...(candidate ? { candidateRank: candidate.rank, totalScore: candidate.total } : {}),
    };
  });
  return {
    columns: columns.filter((_, i) => shown[i]),
    rows,
    failuresPerColumn: failing.filter((_, i) => shown[i]),
    feasibleCount: rows.filter((r) => r.feasible).length,
    unrecorded: Math.max(0, (diagnosis?.nodesEvaluated ?? 0) - rows.length),
  };
}

/** One scorer's part of a candidate's total: score × weight, and its share of the bar. */
export interface ScorePart {
  readonly plugin: string;
  readonly score: number;
  readonly weight: number;
  readonly weighted: number;
}

/** The score breakdown of the top candidates, best first: each scorer's weighted contribution. */
export function scoreBreakdown(
  diagnosis: PlacementDiagnosisJson | undefined,
  top = 5,
): { nodeId: string; total: number; parts: ScorePart[] }[] {
  return (diagnosis?.candidates ?? []).slice(0, top).map((c) => ({
    nodeId: c.nodeId ?? "",
    total: c.totalScore ?? 0,
    parts: (c.scores ?? []).map((s) => ({
      plugin: s.plugin ?? "",
      score: s.score ?? 0,
      weight: s.weight ?? 0,
      weighted: (s.score ?? 0) * (s.weight ?? 0),
    })),
  }));
}
