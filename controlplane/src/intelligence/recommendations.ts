import { api } from "@persys/schema";
import { usageSeries } from "../nodes/usage-recorder.js";
import { duration, forecastCapacity } from "./capacity-forecast.js";
import { clock, eventEvidence, evidence } from "./evidence.js";
import { allNodes, allWorkloads, eventsSince, type IntelligenceSources } from "./intelligence-sources.js";
import { dimensions, freeOn, schedulable } from "./resource-math.js";
import { quantile } from "./trend-fit.js";
import { FLAPPING_THRESHOLD } from "./workload-diagnosis.js";

const K = api.RecommendationKind;
const SERIES = api.EvidenceKind.EVIDENCE_KIND_SERIES;
const NODE = api.EvidenceKind.EVIDENCE_KIND_NODE;

/** Right-sizing thresholds: requests above 2× p95 are oversized, p95 above 90 % of the request undersized. */
export const RIGHT_SIZE = { minPoints: 5, oversized: 0.5, undersized: 0.9, headroom: 1.2 } as const;
/** Rebalancing: reserved shares of schedulable nodes differ by more than this. */
export const REBALANCE_SKEW = 0.4;
/** A node whose capacity runs out sooner than this is at risk. */
export const AT_RISK_SECONDS = 3600;

/**
 * Every recommendation for the cluster now, ordered by kind then id. Reads only: each says what to
 * change and what changing it would do, with the evidence (series, events, node states) it rests on.
 */
export async function recommend(sources: IntelligenceSources, windowSeconds: number): Promise<api.Recommendation[]> {
  const now = sources.now();
  const from = now - windowSeconds * 1000;
  const nodes = allNodes(sources);
  const workloads = allWorkloads(sources);
  const out = [
    ...(await rightSizing(sources, workloads, from, now)),
    ...rebalancing(sources, nodes, workloads),
    ...(await flapping(sources, from, now)),
    ...(await atRisk(sources, nodes, windowSeconds)),
  ];
  return out.sort((a, b) => a.kind - b.kind || a.id.localeCompare(b.id));
}

async function rightSizing(
  sources: IntelligenceSources,
  workloads: readonly api.Workload[],
  from: number,
  now: number,
): Promise<api.Recommendation[]> {
  const out: api.Recommendation[] = [];
  for (const w of workloads) {
    const running = (w.status?.replicas ?? []).filter((r) => r.state === api.ReplicaState.REPLICA_STATE_RUNNING);
    if (running.length === 0) continue;
    for (const d of dimensions.filter((x) => x.name !== "disk")) {
      const requested = w.resources?.[d.field] ?? 0;
      if (requested <= 0) continue;
      const values: number[] = [];
      const names: string[] = [];
      for (const r of running) {
        const name =
          d.name === "cpu" ? usageSeries.replicaCpu(w.id, r.index) : usageSeries.replicaMemory(w.id, r.index);
        names.push(name);
        values.push(...(await sources.events.range(name, from, now)).map((s) => s.value));
      }
      const p95 = quantile(values, 0.95);
      if (p95 === undefined || values.length < RIGHT_SIZE.minPoints) continue;
      const suggested = Math.max(1, Math.ceil(p95 * RIGHT_SIZE.headroom));
      const over = p95 < RIGHT_SIZE.oversized * requested;
      const under = p95 > RIGHT_SIZE.undersized * requested;
      if (!over && !under) continue;
      const delta = Math.abs(requested - suggested) * (w.replicas || running.length);
      out.push({
        kind: K.RECOMMENDATION_KIND_RIGHT_SIZE,
        targetNodeId: "",
        id: `right-size/${w.id}/${d.name}`,
        workloadId: w.id,
        nodeId: "",
        summary: `${w.id} requests ${requested} ${d.unit} of ${d.name} per replica; measured p95 is ${Math.round(p95)} ${d.unit} over ${values.length} points`,
        action: `set resources.${d.field} to ${suggested}`,
        expectedEffect: over
          ? `frees ${delta} ${d.unit} of ${d.name} reservations across ${w.replicas || running.length} replica(s)`
          : `reserves ${delta} ${d.unit} more, so replicas stop running at their limit`,
        evidence: names.map((n) => evidence(SERIES, n, `${d.name} use of one replica`)),
      });
    }
  }
  return out;
}

/** Reserved share of a node: the highest of cpu and memory reservations over allocatable. */
/** A node's reserved share: the higher of its cpu and memory reservations over allocatable (0..1+). */
export function reservedShare(node: api.Node): number {
  let s = 0;
  for (const d of dimensions.filter((x) => x.name !== "disk")) {
    const alloc = node.allocatable?.[d.field] ?? 0;
    if (alloc > 0) s = Math.max(s, (node.allocated?.[d.field] ?? 0) / alloc);
  }
  return s;
}

function rebalancing(
  sources: IntelligenceSources,
  nodes: readonly api.Node[],
  workloads: readonly api.Workload[],
): api.Recommendation[] {
  const open = nodes.filter(schedulable);
  if (open.length < 2) return [];
  const sorted = [...open].sort((a, b) => reservedShare(b) - reservedShare(a));
  const hot = sorted[0]!;
  const cold = sorted.at(-1)!;
  const skew = reservedShare(hot) - reservedShare(cold);
  if (skew <= REBALANCE_SKEW) return [];
  const byId = new Map(workloads.map((w) => [w.id, w]));
  const after = (node: api.Node, w: api.Workload, sign: number): number => {
    const allocated = { ...node.allocated } as api.Resources;
    for (const d of dimensions) allocated[d.field] = (allocated[d.field] ?? 0) + sign * (w.resources?.[d.field] ?? 0);
    return reservedShare({ ...node, allocated });
  };
  const allowedOn = (w: api.Workload, node: api.Node) =>
    Object.entries(w.placement?.nodeSelector ?? {}).every(([k, v]) => node.labels[k] === v) &&
    (w.placement?.requiredCapabilities ?? []).every((c) => node.capabilities.includes(c)) &&
    node.supportedKinds.includes(w.kind) &&
    dimensions.every((d) => (w.resources?.[d.field] ?? 0) <= freeOn(node, d));
  const movable = sources.state
    .assignmentsOn(hot.id)
    .map((a) => ({ a: a.value, w: byId.get(a.value.workloadId) }))
    .find(({ w }) => w && allowedOn(w, cold) && Math.abs(after(hot, w, -1) - after(cold, w, 1)) < skew);
  if (!movable?.w) return [];
  const moved = movable.w;
  const pct = (x: number) => `${Math.round(x * 100)} %`;
  return [
    {
      kind: K.RECOMMENDATION_KIND_REBALANCE,
      id: `rebalance/${hot.id}/${cold.id}`,
      workloadId: moved.id,
      nodeId: hot.id,
      summary: `${hot.id} is ${pct(reservedShare(hot))} reserved, ${cold.id} ${pct(reservedShare(cold))}: skew ${pct(skew)}`,
      action: `move replica ${movable.a.index} of ${moved.id} from ${hot.id} to ${cold.id}`,
      replicaIndex: movable.a.index,
      targetNodeId: cold.id,
      expectedEffect: `${hot.id} ${pct(after(hot, moved, -1))}, ${cold.id} ${pct(after(cold, moved, 1))} reserved`,
      evidence: [hot, cold].map((n) =>
        evidence(NODE, `node/${n.id}`, `${n.id} reserved ${pct(reservedShare(n))}`, { nodeId: n.id }),
      ),
    },
  ];
}

async function flapping(sources: IntelligenceSources, from: number, now: number): Promise<api.Recommendation[]> {
  const events = await eventsSince(sources, from);
  const byWorkload = new Map<string, typeof events>();
  for (const e of events) {
    if (!e.fields.workload || !["ReplicaFailed", "ReplicaMoved", "ReplicaRetryScheduled"].includes(e.fields.type ?? ""))
      continue;
    byWorkload.set(e.fields.workload, [...(byWorkload.get(e.fields.workload) ?? []), e]);
  }
  const out: api.Recommendation[] = [];
  for (const [workloadId, flaps] of byWorkload) {
    if (flaps.length < FLAPPING_THRESHOLD) continue;
    const last = flaps.at(-1)!;
    out.push({
      kind: K.RECOMMENDATION_KIND_FLAPPING,
      targetNodeId: "",
      id: `flapping/${workloadId}`,
      workloadId,
      nodeId: "",
      summary: `${workloadId} failed, retried or moved ${flaps.length} times since ${clock(flaps[0]!.timeMs, now)}; last: ${last.fields.message ?? ""}`,
      action: last.fields.code
        ? `fix the cause of ${last.fields.code} (persysctl diagnose ${workloadId}), then retry`
        : `persysctl diagnose ${workloadId}`,
      expectedEffect: "replicas stay put instead of churning; fewer pushes and events",
      evidence: flaps.slice(-5).map((e) => eventEvidence(e)),
    });
  }
  return out;
}

async function atRisk(
  sources: IntelligenceSources,
  nodes: readonly api.Node[],
  windowSeconds: number,
): Promise<api.Recommendation[]> {
  const out: api.Recommendation[] = [];
  for (const node of nodes) {
    const replicas = sources.state.assignmentsOn(node.id).length;
    const bad = node.conditions.filter((c) => c.status === api.ConditionStatus.CONDITION_STATUS_FALSE);
    if (node.state === api.NodeState.NODE_STATE_NOT_READY || bad.length > 0) {
      out.push({
        kind: K.RECOMMENDATION_KIND_NODE_AT_RISK,
        targetNodeId: "",
        id: `at-risk/${node.id}/state`,
        workloadId: "",
        nodeId: node.id,
        summary: `${node.id} is ${node.state === api.NodeState.NODE_STATE_NOT_READY ? "not ready" : "ready"}${bad.length ? ` with ${bad.map((c) => `${c.type} false (${c.reason})`).join(", ")}` : ""}; ${replicas} replica(s) on it`,
        action: `check the agent on ${node.id}; drain it if it stays unhealthy (persysctl drain ${node.id})`,
        expectedEffect: `${replicas} replica(s) re-placed on healthy nodes`,
        evidence: [evidence(NODE, `node/${node.id}`, `state ${api.nodeStateToJSON(node.state)}`, { nodeId: node.id })],
      });
    }
  }
  const forecasts = await forecastCapacity(sources, {
    nodeId: "",
    windowSeconds,
    method: api.ForecastMethod.FORECAST_METHOD_UNSPECIFIED,
  });
  for (const f of forecasts) {
    if (!f.nodeId || f.secondsToExhaustion === undefined || f.secondsToExhaustion > AT_RISK_SECONDS) continue;
    const what = f.signal === api.ForecastSignal.FORECAST_SIGNAL_RESERVATION ? "reservations" : "usage";
    const dim = api.resourceDimensionToJSON(f.dimension).replace("RESOURCE_DIMENSION_", "").toLowerCase();
    out.push({
      kind: K.RECOMMENDATION_KIND_NODE_AT_RISK,
      targetNodeId: "",
      id: `at-risk/${f.nodeId}/${dim}-${what}`,
      workloadId: "",
      nodeId: f.nodeId,
      summary: f.message,
      action:
        what === "reservations"
          ? `add capacity to the pool of ${f.nodeId} or lower requests (see right-size recommendations)`
          : `find the replica growing on ${f.nodeId} (persysctl get node ${f.nodeId}) and cap or move it`,
      expectedEffect: `placements keep fitting beyond ${duration(f.secondsToExhaustion)} from now`,
      evidence: [evidence(SERIES, f.series, f.message, { nodeId: f.nodeId })],
    });
  }
  return out;
}
