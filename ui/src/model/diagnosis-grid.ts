import type {
  CandidateScoreJson,
  LabelExpressionJson,
  NodeJson,
  PlacementDiagnosisJson,
  ResourcesJson,
  WorkloadJson,
} from "../api/wire-types.js";

/** The columns of the grid, in the scheduler's filter order (controlplane/src/scheduler/default-pipeline.ts). */
export const gridFilters = [
  { plugin: "node-ready", label: "ready" },
  { plugin: "runtime-capability", label: "runtime / capabilities" },
  { plugin: "node-affinity", label: "selector / affinity" },
  { plugin: "resources-fit", dimension: "cpu", label: "cpu" },
  { plugin: "resources-fit", dimension: "memory", label: "memory" },
  { plugin: "resources-fit", dimension: "disk", label: "disk" },
  { plugin: "host-ports", label: "host ports" },
  { plugin: "replica-anti-affinity", label: "replica anti-affinity" },
] as const;

export type GridFilter = (typeof gridFilters)[number];

/** One cell: whether the node passes that filter for this workload, and the numbers or facts why. */
export interface GridCell {
  readonly pass: boolean;
  /** Short text with the numbers, e.g. "need 512 MiB, free 256 MiB". */
  readonly detail: string;
}

/** One node's row: a cell per filter, its score when it was a top candidate. */
export interface GridRow {
  readonly nodeId: string;
  readonly cells: readonly GridCell[];
  readonly feasible: boolean;
  readonly winner: boolean;
  /** Rank among the recorded candidates (0 = best), or undefined when not among them. */
  readonly candidateRank?: number;
  readonly totalScore?: number;
}

/** The grid of one placement decision. */
export interface DiagnosisGrid {
  readonly columns: readonly GridFilter[];
  /** Winner first, then the other candidates by rank, then feasible nodes, then the rest; ids ascending. */
  readonly rows: readonly GridRow[];
  /** Failing nodes per column (a node failing several filters counts in each). */
  readonly failuresPerColumn: readonly number[];
  readonly feasibleCount: number;
  /** The recorded diagnosis' own counts, for comparison with the rows re-evaluated here. */
  readonly recorded?: PlacementDiagnosisJson;
}

export interface GridInput {
  readonly workload: WorkloadJson;
  readonly nodes: readonly NodeJson[];
  /** The recorded decision (explain, plan or the replica status). */
  readonly diagnosis?: PlacementDiagnosisJson;
  /** Other workloads, for host ports in use on each node. Optional: host ports then always pass. */
  readonly workloads?: readonly WorkloadJson[];
  /** The replica the grid is for: its own reservation is not counted against its node. */
  readonly replicaIndex?: number;
}

const kindRuntime: Record<string, string> = {
  WORKLOAD_KIND_CONTAINER: "container",
  WORKLOAD_KIND_COMPOSE: "compose",
  WORKLOAD_KIND_VM: "vm",
};

/**
 * Re-evaluates the scheduler's filters for every node from the node's current state and the
 * workload's spec, and joins the recorded decision (winner, candidate scores). Every filter is
 * evaluated for every node, as the scheduler does, so a node can fail several columns.
 *
 * The numbers are today's: a node that changed since the decision may read differently from the
 * recorded counts, which `recorded` keeps for comparison. Spread and workload anti-affinity are not
 * re-evaluated (they need every placement); the recorded counts show them.
 */
export function buildDiagnosisGrid(input: GridInput): DiagnosisGrid {
  const { workload, diagnosis } = input;
  const replica = workload.status?.replicas?.find((r) => (r.index ?? 0) === input.replicaIndex);
  const ownNode = replica?.nodeId;
  const portsByNode = hostPortsByNode(input.workloads ?? [], workload.id);
  const siblingNodes = new Set(
    (workload.status?.replicas ?? [])
      .filter((r) => (r.index ?? 0) !== input.replicaIndex && r.nodeId)
      .map((r) => r.nodeId!),
  );
  const candidates = new Map<string, { rank: number; score: CandidateScoreJson }>();
  (diagnosis?.candidates ?? []).forEach((score, rank) => {
    if (score.nodeId) candidates.set(score.nodeId, { rank, score });
  });
  const winnerId = diagnosis?.winnerNodeId;
  const failures = gridFilters.map(() => 0);
  const rows = input.nodes.map((node): GridRow => {
    const cells = gridFilters.map((filter) =>
      evaluate(filter, node, workload, {
        ownNode: ownNode === node.id,
        usedPorts: portsByNode.get(node.id) ?? new Set(),
        siblingNodes,
        nodes: input.nodes,
      }),
    );
    cells.forEach((cell, i) => {
      if (!cell.pass) failures[i]! += 1;
    });
    const candidate = candidates.get(node.id);
    return {
      nodeId: node.id,
      cells,
      feasible: cells.every((c) => c.pass),
      winner: node.id === winnerId,
      ...(candidate ? { candidateRank: candidate.rank, totalScore: candidate.score.totalScore ?? 0 } : {}),
    };
  });
  rows.sort(rowOrder);
  return {
    columns: gridFilters,
    rows,
    failuresPerColumn: failures,
    feasibleCount: rows.filter((r) => r.feasible).length,
    ...(diagnosis ? { recorded: diagnosis } : {}),
  };
}

function rowOrder(a: GridRow, b: GridRow): number {
  const rank = (r: GridRow) => (r.winner ? 0 : r.candidateRank !== undefined ? 1 : r.feasible ? 2 : 3);
  return (
    rank(a) - rank(b) ||
    (a.candidateRank ?? 0) - (b.candidateRank ?? 0) ||
    (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0)
  );
}

interface Context {
  readonly ownNode: boolean;
  readonly usedPorts: ReadonlySet<string>;
  readonly siblingNodes: ReadonlySet<string>;
  readonly nodes: readonly NodeJson[];
}

function evaluate(filter: GridFilter, node: NodeJson, workload: WorkloadJson, ctx: Context): GridCell {
  switch (filter.plugin) {
    case "node-ready":
      return nodeReady(node);
    case "runtime-capability":
      return runtimeCapability(node, workload);
    case "node-affinity":
      return nodeAffinity(node, workload);
    case "resources-fit":
      return resourceFit(node, workload, filter.dimension, ctx.ownNode);
    case "host-ports":
      return hostPorts(workload, ctx.usedPorts);
    case "replica-anti-affinity":
      return replicaAntiAffinity(node, workload, ctx);
  }
}

function nodeReady(node: NodeJson): GridCell {
  if (node.state !== "NODE_STATE_READY") return { pass: false, detail: shortState(node.state) };
  if (node.draining) return { pass: false, detail: "draining" };
  if (node.cordoned) return { pass: false, detail: "cordoned" };
  return { pass: true, detail: "ready" };
}

function runtimeCapability(node: NodeJson, workload: WorkloadJson): GridCell {
  const runtime = kindRuntime[workload.kind ?? ""] ?? "container";
  const kinds = node.supportedKinds ?? [];
  if (workload.kind && kinds.length > 0 && !kinds.includes(workload.kind)) {
    return { pass: false, detail: `no ${runtime} runtime` };
  }
  const missing = (workload.placement?.requiredCapabilities ?? []).filter(
    (c) => !(node.capabilities ?? []).includes(c),
  );
  if (missing.length > 0) return { pass: false, detail: `missing ${missing.join(", ")}` };
  const arch = workload.placement?.arch;
  if (arch && node.arch && arch !== node.arch) return { pass: false, detail: `arch ${node.arch}, need ${arch}` };
  return { pass: true, detail: runtime };
}

function nodeAffinity(node: NodeJson, workload: WorkloadJson): GridCell {
  const labels = node.labels ?? {};
  for (const [key, value] of Object.entries(workload.placement?.nodeSelector ?? {})) {
    if (labels[key] !== value) return { pass: false, detail: `${key}=${labels[key] ?? "∅"}, need ${value}` };
  }
  for (const expression of workload.placement?.requiredNodeAffinity ?? []) {
    if (!matchesExpression(labels, expression))
      return { pass: false, detail: `fails ${describeExpression(expression)}` };
  }
  const rules =
    Object.keys(workload.placement?.nodeSelector ?? {}).length +
    (workload.placement?.requiredNodeAffinity?.length ?? 0);
  return { pass: true, detail: rules === 0 ? "no rules" : `${rules} rule${rules === 1 ? "" : "s"} hold` };
}

/** Whether labels satisfy one label expression (the operators of persys.api.v1.LabelOperator). */
export function matchesExpression(labels: Record<string, string>, expression: LabelExpressionJson): boolean {
  const key = expression.key ?? "";
  const has = Object.hasOwn(labels, key);
  const values = expression.values ?? [];
  switch (expression.operator) {
    case "LABEL_OPERATOR_IN":
      return has && values.includes(labels[key]!);
    case "LABEL_OPERATOR_NOT_IN":
      return !has || !values.includes(labels[key]!);
    case "LABEL_OPERATOR_EXISTS":
      return has;
    case "LABEL_OPERATOR_DOES_NOT_EXIST":
      return !has;
    default:
      return true;
  }
}

function describeExpression(e: LabelExpressionJson): string {
  const op = (e.operator ?? "").replace("LABEL_OPERATOR_", "").toLowerCase().replace(/_/g, " ");
  return `${e.key} ${op}${e.values?.length ? ` (${e.values.join(", ")})` : ""}`;
}

const dimensions = {
  cpu: { field: "cpuMillicores", unit: "m" },
  memory: { field: "memoryMib", unit: " MiB" },
  disk: { field: "diskGib", unit: " GiB" },
} as const;

function resourceFit(
  node: NodeJson,
  workload: WorkloadJson,
  dimension: keyof typeof dimensions,
  ownNode: boolean,
): GridCell {
  const { field, unit } = dimensions[dimension];
  const need = value(workload.resources, field);
  const allocatable = value(node.allocatable, field);
  const allocated = value(node.allocated, field) - (ownNode ? need : 0);
  const free = allocatable - allocated;
  if (need === 0) return { pass: true, detail: `none requested (free ${free}${unit})` };
  return { pass: need <= free, detail: `need ${need}${unit}, free ${free}${unit} of ${allocatable}${unit}` };
}

function value(resources: ResourcesJson | undefined, field: keyof ResourcesJson): number {
  return resources?.[field] ?? 0;
}

function hostPorts(workload: WorkloadJson, used: ReadonlySet<string>): GridCell {
  const wanted = (workload.container?.ports ?? []).filter((p) => p.hostPort);
  if (wanted.length === 0) return { pass: true, detail: "none requested" };
  const taken = wanted.filter((p) => used.has(portKey(p.hostPort!, p.protocol)));
  if (taken.length > 0) return { pass: false, detail: `in use: ${taken.map((p) => p.hostPort).join(", ")}` };
  return { pass: true, detail: `free: ${wanted.map((p) => p.hostPort).join(", ")}` };
}

function portKey(port: number, protocol: string | undefined): string {
  return `${port}/${protocol === "PROTOCOL_UDP" ? "udp" : "tcp"}`;
}

function hostPortsByNode(workloads: readonly WorkloadJson[], except: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const w of workloads) {
    if (w.id === except) continue;
    const ports = (w.container?.ports ?? []).filter((p) => p.hostPort);
    if (ports.length === 0) continue;
    for (const replica of w.status?.replicas ?? []) {
      if (!replica.nodeId) continue;
      const set = out.get(replica.nodeId) ?? new Set<string>();
      for (const p of ports) set.add(portKey(p.hostPort!, p.protocol));
      out.set(replica.nodeId, set);
    }
  }
  return out;
}

function replicaAntiAffinity(node: NodeJson, workload: WorkloadJson, ctx: Context): GridCell {
  const rule = workload.placement?.replicaAntiAffinity;
  if (!rule || rule.enforcement === "ENFORCEMENT_PREFERRED")
    return { pass: true, detail: rule ? "preferred only" : "no rule" };
  const key = rule.topologyKey;
  const domain = key ? node.labels?.[key] : node.id;
  if (key && domain === undefined) return { pass: true, detail: `no ${key} label` };
  const byId = new Map(ctx.nodes.map((n) => [n.id, n]));
  const clash = [...ctx.siblingNodes].some((id) => (key ? byId.get(id)?.labels?.[key] : id) === domain);
  return clash
    ? { pass: false, detail: `replica already in ${key ? `${key}=${domain}` : "node"}` }
    : { pass: true, detail: "no sibling here" };
}

function shortState(state: string | undefined): string {
  return (state ?? "NODE_STATE_UNSPECIFIED").replace("NODE_STATE_", "").toLowerCase().replace(/_/g, " ");
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
