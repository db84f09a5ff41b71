import type { RecordedDiagnosis } from "../diagnosis/recorded-diagnosis.js";
import type { PlacementRequest } from "../model/placement-request.js";
import type { SchedulerNode } from "../model/scheduler-node.js";
import { SchedulerEngine, type SchedulerOptions } from "../scheduler-engine.js";
import { ClusterSnapshot, type ReplicaPlacement } from "../snapshot/cluster-snapshot.js";

/** What one filter said about every node, both ways the engine can ask. */
export interface FilterProbe {
  /** Per node id: the reasons the filter gives when asked about that node alone (`check`). */
  readonly perNode: Readonly<Record<string, string[]>>;
  /** Per reason: how many nodes the decision path (`run`) counted for the filter. */
  readonly counts: Readonly<Record<string, number>>;
  /** The dry-run diagnosis of the next unplaced replica. */
  readonly diagnosis: RecordedDiagnosis;
  readonly engine: SchedulerEngine;
}

/**
 * Test support: builds a snapshot of `nodes` with `placements` reserved, then reports what the
 * filter named `plugin` says about each node for the first unplaced replica of `request`, through
 * the single-node path and the decision path, so plugin tests can assert both agree.
 */
export function probeFilter(
  plugin: string,
  nodes: readonly SchedulerNode[],
  request: PlacementRequest,
  placements: readonly ReplicaPlacement[] = [],
  options: SchedulerOptions = {},
): FilterProbe {
  const snapshot = new ClusterSnapshot();
  for (const node of nodes) snapshot.upsertNode(node);
  for (const p of placements) snapshot.reserve(p);
  const engine = new SchedulerEngine(snapshot, options);
  let replica = 0;
  while (snapshot.placementOf(request.workloadId, replica) !== undefined) replica++;
  const compiled = engine.compile({ ...request, replicas: replica + 1 });
  const perNode: Record<string, string[]> = {};
  for (const e of engine.explainNodes(compiled, replica)) {
    perNode[e.nodeId] = e.statuses.filter((s) => s.plugin === plugin).map((s) => s.reason);
  }
  const diagnosis = snapshot.tentative(() => engine.placeReplica(compiled, replica).diagnosis);
  const counts: Record<string, number> = {};
  for (const c of diagnosis.filterCounts) if (c.plugin === plugin) counts[c.reason] = c.count;
  return { perNode, counts, diagnosis, engine };
}

/** The per-reason totals implied by per-node reasons, to compare with `counts`. */
export function tally(perNode: Readonly<Record<string, string[]>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const reasons of Object.values(perNode)) for (const r of reasons) out[r] = (out[r] ?? 0) + 1;
  return out;
}
