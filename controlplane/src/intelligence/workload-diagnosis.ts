import { api, type ErrorCode } from "@persys/schema";
import { diagnosisOf } from "../cluster/records.js";
import type { StoredEvent } from "../events/event-store.js";
import { clock, codeName, eventEvidence, evidence, rankRemediations, wireCode } from "./evidence.js";
import { allNodes, eventsSince, type IntelligenceSources } from "./intelligence-sources.js";
import { rankLexically } from "./lexical-ranking.js";
import { dimensions, freeOn, schedulable } from "./resource-math.js";

/** Failures and moves of one workload within the window that make it "flapping". */
export const FLAPPING_THRESHOLD = 3;
const FLAP_TYPES = new Set(["ReplicaFailed", "ReplicaMoved", "ReplicaRetryScheduled"]);
/** How long after a removal the pending record may be written (the next reconcile pass). */
const PENDING_SLACK_MS = 10_000;

interface DiagnosisContext {
  readonly sources: IntelligenceSources;
  readonly workload: api.Workload;
  readonly nodes: api.Node[];
  readonly workloadEvents: StoredEvent[];
  readonly clusterEvents: StoredEvent[];
  readonly now: number;
}

const {
  EVIDENCE_KIND_DIAGNOSIS: DIAGNOSIS,
  EVIDENCE_KIND_NODE: NODE,
  EVIDENCE_KIND_ERROR_CODE: ERROR,
} = api.EvidenceKind;

/**
 * Explains one workload: per replica that is not running, the chain of causes from the symptom
 * (pending, failed, unknown) to its root (a lost node, missing capacity, a failing image), each
 * with the event ids, diagnoses and node states it rests on; then the window's events and the
 * registry's remediation texts ranked by relevance. Reads only.
 *
 * @throws PersysError NOT_FOUND for an unknown workload.
 */
export async function diagnoseWorkload(
  sources: IntelligenceSources,
  workloadId: string,
  windowSeconds: number,
): Promise<api.WorkloadDiagnosis> {
  const workload = sources.workloads.get({ workloadId, view: api.WorkloadView.WORKLOAD_VIEW_FULL }).workload!;
  const now = sources.now();
  const from = now - windowSeconds * 1000;
  const ctx: DiagnosisContext = {
    sources,
    workload,
    nodes: allNodes(sources),
    workloadEvents: await eventsSince(sources, from, { workloadId }),
    clusterEvents: await eventsSince(sources, from),
    now,
  };
  const causes: api.Cause[] = [];
  for (const replica of workload.status?.replicas ?? []) causes.push(...replicaCauses(ctx, replica));
  const flapping = flappingCause(ctx);
  if (flapping) causes.push(flapping);

  const cited = new Set(
    causes.flatMap((c) => c.evidence.filter((e) => e.kind === api.EvidenceKind.EVIDENCE_KIND_EVENT).map((e) => e.ref)),
  );
  const query = [
    workload.id,
    ...causes.flatMap((c) => [c.summary, ...c.evidence.map((e) => e.nodeId)]),
    ...(causes.length === 0 ? ["running placed"] : []),
  ].join(" ");
  const related = relatedEvents(ctx, query, cited);
  const codes = [...new Set(causes.map((c) => codeName(c.code)).filter((c): c is ErrorCode => c !== undefined))];
  return {
    workloadId: workload.id,
    state: workload.status?.state ?? api.WorkloadState.WORKLOAD_STATE_UNSPECIFIED,
    summary: summarise(workload, causes),
    causes,
    relatedEvents: related,
    remediations: rankRemediations(query, codes),
    windowStart: new Date(from),
    generatedAt: new Date(now),
  };
}

function replicaCauses(ctx: DiagnosisContext, replica: api.ReplicaStatus): api.Cause[] {
  const { workload, sources } = ctx;
  const pending = sources.state.pendingOf(workload.id, replica.index);
  if (pending) {
    const placement = diagnosisOf(pending.value.diagnosis) ?? replica.placement;
    const since = Date.parse(pending.value.since);
    return [unschedulable(ctx, replica.index, placement, since), ...origins(ctx, replica.index, since)];
  }
  if (replica.state === api.ReplicaState.REPLICA_STATE_FAILED) return [failed(ctx, replica)];
  const node = ctx.nodes.find((n) => n.id === replica.nodeId);
  if (
    node &&
    (replica.state === api.ReplicaState.REPLICA_STATE_UNKNOWN || node.state !== api.NodeState.NODE_STATE_READY)
  ) {
    return [nodeDown(ctx, replica.index, node)];
  }
  return [];
}

function latest(events: readonly StoredEvent[], match: (e: StoredEvent) => boolean): StoredEvent | undefined {
  for (let i = events.length - 1; i >= 0; i--) if (match(events[i]!)) return events[i];
  return undefined;
}

function unschedulable(
  ctx: DiagnosisContext,
  index: number,
  placement: api.PlacementDiagnosis | undefined,
  since: number,
): api.Cause {
  const message = (placement?.message ?? "no node can take it").replace(/\.$/, "");
  const event = latest(
    ctx.workloadEvents,
    (e) => e.fields.type === "ReplicaUnschedulable" && e.fields.replica === `${index}`,
  );
  return {
    rule: "replica-unschedulable",
    summary: `replica ${index} pending since ${clock(since, ctx.now)}: ${message}`,
    replicaIndex: index,
    evidence: [
      evidence(DIAGNOSIS, `pending/${ctx.workload.id}/${index}`, message, { time: new Date(since) }),
      ...(event ? [eventEvidence(event)] : []),
    ],
    remediation: whatWouldFit(ctx, placement),
    code: wireCode("UNSCHEDULABLE"),
  };
}

/** The smallest change that lets one replica fit: capacity freed on the closest node, or a node back. */
export function whatWouldFit(
  ctx: Pick<DiagnosisContext, "workload" | "nodes">,
  placement: api.PlacementDiagnosis | undefined,
): string {
  const request = ctx.workload.resources;
  const open = ctx.nodes.filter(schedulable);
  const fixes: string[] = [];
  let best: { node: api.Node; shortfalls: string[]; score: number } | undefined;
  for (const node of open) {
    const shortfalls: string[] = [];
    let score = 0;
    for (const d of dimensions) {
      const need = request?.[d.field] ?? 0;
      const free = freeOn(node, d);
      if (need > free) {
        shortfalls.push(`${need - free} ${d.unit} of ${d.name} (${free} free, needs ${need})`);
        score += (need - free) / Math.max(1, node.allocatable?.[d.field] ?? 1);
      }
    }
    if (shortfalls.length > 0 && (!best || score < best.score)) best = { node, shortfalls, score };
  }
  if (best) fixes.push(`freeing ${best.shortfalls.join(" and ")} on ${best.node.id} would fit it`);
  for (const node of ctx.nodes.filter((n) => n.state !== api.NodeState.NODE_STATE_READY)) {
    const fits = dimensions.every((d) => (request?.[d.field] ?? 0) <= freeOn(node, d));
    if (fits) fixes.push(`${node.id} coming back would fit it`);
  }
  if (open.length === 0) fixes.push("no node is ready and schedulable: bring a node back or add one");
  const otherReasons = (placement?.filterCounts ?? [])
    .filter((f) => f.plugin !== "resources-fit" && f.plugin !== "node-ready")
    .map((f) => `${f.count} node(s) refused: ${f.reason}`);
  if (otherReasons.length > 0) fixes.push(`relax placement or relabel nodes (${otherReasons.join(", ")})`);
  return fixes.length > 0 ? `${fixes.join("; ")}` : "add capacity or relax the placement rules";
}

/** Why a pending replica lost its node, or why capacity it could use went away. */
function origins(ctx: DiagnosisContext, index: number, since: number): api.Cause[] {
  const removal = latest(
    ctx.workloadEvents,
    (e) =>
      (e.fields.type === "ReplicaMoved" || e.fields.type === "ReplicaRemoved") &&
      e.fields.replica === `${index}` &&
      e.timeMs <= since + PENDING_SLACK_MS,
  );
  if (removal?.fields.node) {
    const lostNode = removal.fields.node;
    const lost = latest(
      ctx.clusterEvents,
      (e) =>
        e.fields.type === "NodeLost" && e.fields.node === lostNode && e.timeMs <= removal.timeMs + PENDING_SLACK_MS,
    );
    const notReady = latest(
      ctx.clusterEvents,
      (e) => e.fields.type === "NodeNotReady" && e.fields.node === lostNode && e.timeMs <= (lost ?? removal).timeMs,
    );
    const node = ctx.nodes.find((n) => n.id === lostNode);
    const ev = [lost, removal, notReady].filter((e): e is StoredEvent => e !== undefined).map((e) => eventEvidence(e));
    if (node) ev.push(nodeEvidence(node));
    const summary = lost
      ? `node ${lostNode} was lost at ${clock(lost.timeMs, ctx.now)}${notReady ? ` (NotReady since ${clock(notReady.timeMs, ctx.now)})` : ""}; replica ${index} was removed from it and must be re-placed`
      : `replica ${index} was removed from ${lostNode} at ${clock(removal.timeMs, ctx.now)}: ${removal.fields.message ?? ""}`;
    return [
      {
        rule: lost ? "node-lost" : "replica-removed",
        summary,
        replicaIndex: index,
        evidence: ev,
        remediation: lost ? `bring ${lostNode} back or add a node with room for the replica` : "",
        code: wireCode(lost ? "NODE_LOST" : undefined),
      },
    ];
  }
  // Never placed, or placed long ago: capacity that went away in the window and would have fitted.
  const request = ctx.workload.resources;
  const causes: api.Cause[] = [];
  for (const node of ctx.nodes.filter((n) => n.state !== api.NodeState.NODE_STATE_READY)) {
    const lost = latest(
      ctx.clusterEvents,
      (e) => (e.fields.type === "NodeLost" || e.fields.type === "NodeNotReady") && e.fields.node === node.id,
    );
    if (!lost) continue;
    if (!dimensions.every((d) => (request?.[d.field] ?? 0) <= (node.allocatable?.[d.field] ?? 0))) continue;
    causes.push({
      rule: "capacity-lost",
      summary: `node ${node.id}, which could run replica ${index}, went ${lost.fields.type === "NodeLost" ? "lost" : "not ready"} at ${clock(lost.timeMs, ctx.now)}`,
      replicaIndex: index,
      evidence: [eventEvidence(lost), nodeEvidence(node)],
      remediation: `bring ${node.id} back or add a node`,
      code: wireCode(lost.fields.type === "NodeLost" ? "NODE_LOST" : "UNAVAILABLE"),
    });
  }
  return causes;
}

function nodeEvidence(node: api.Node): api.Evidence {
  const state = api.nodeStateToJSON(node.state).replace("NODE_STATE_", "");
  const conditions = node.conditions
    .filter((c) => c.status !== api.ConditionStatus.CONDITION_STATUS_TRUE)
    .map((c) => `${c.type}=${api.conditionStatusToJSON(c.status).replace("CONDITION_STATUS_", "")} ${c.reason}`);
  return evidence(
    NODE,
    `node/${node.id}`,
    `${node.id} is ${state}${node.cordoned ? ", cordoned" : ""}${conditions.length ? `; ${conditions.join(", ")}` : ""}`,
    {
      nodeId: node.id,
      type: "NodeState",
      ...(node.lastHeartbeatAt ? { time: node.lastHeartbeatAt } : {}),
    },
  );
}

function failed(ctx: DiagnosisContext, replica: api.ReplicaStatus): api.Cause {
  const code = replica.reason?.code ?? api.ErrorCode.ERROR_CODE_UNSPECIFIED;
  const name = codeName(code);
  const event = latest(
    ctx.workloadEvents,
    (e) => e.fields.type === "ReplicaFailed" && e.fields.replica === `${replica.index}`,
  );
  return {
    rule: "replica-failed",
    summary: `replica ${replica.index} failed on ${replica.nodeId || "its node"}${name ? ` with ${name}` : ""}: ${replica.reason?.message ?? ""}`,
    replicaIndex: replica.index,
    evidence: [
      ...(event ? [eventEvidence(event)] : []),
      ...(name ? [evidence(ERROR, name, replica.reason?.message ?? "", { nodeId: replica.nodeId })] : []),
    ],
    remediation: replica.reason?.retryable
      ? `it is retried${replica.reason.nextRetryAt ? ` at ${clock(replica.reason.nextRetryAt.getTime(), ctx.now)}` : ""}; fix the cause to stop the retries`
      : "fix the spec (or the image) and apply again, or retry once the cause is gone",
    code,
  };
}

function nodeDown(ctx: DiagnosisContext, index: number, node: api.Node): api.Cause {
  const event = latest(ctx.clusterEvents, (e) => e.fields.type === "NodeNotReady" && e.fields.node === node.id);
  return {
    rule: "node-not-ready",
    summary: `replica ${index} is on ${node.id}, which is not ready${event ? ` since ${clock(event.timeMs, ctx.now)}` : ""}; it is re-placed when the node is lost`,
    replicaIndex: index,
    evidence: [...(event ? [eventEvidence(event)] : []), nodeEvidence(node)],
    remediation: `check ${node.id}'s agent and network`,
    code: wireCode("UNAVAILABLE"),
  };
}

function flappingCause(ctx: DiagnosisContext): api.Cause | undefined {
  const flaps = ctx.workloadEvents.filter((e) => FLAP_TYPES.has(e.fields.type ?? ""));
  if (flaps.length < FLAPPING_THRESHOLD) return undefined;
  return {
    rule: "flapping",
    summary: `${flaps.length} failures, retries or moves in the window`,
    evidence: flaps.slice(-5).map((e) => eventEvidence(e)),
    remediation: "read the latest failure's reason; a crash loop needs a spec or image fix",
    code: wireCode(undefined),
  };
}

function relatedEvents(ctx: DiagnosisContext, query: string, cited: ReadonlySet<string>): api.Evidence[] {
  // Workload events are recorded twice (the global stream and the workload's); keep the workload's copy.
  const seen = new Map<string, number>();
  const all = [...ctx.workloadEvents, ...ctx.clusterEvents].filter((e) => {
    const key = `${e.fields.type}|${e.fields.message}|${e.fields.replica}|${e.fields.node}`;
    const at = seen.get(key);
    if (at !== undefined && Math.abs(at - e.timeMs) < 1000) return false;
    seen.set(key, e.timeMs);
    return true;
  });
  const span = Math.max(1, ctx.now - (all[0]?.timeMs ?? ctx.now));
  const ranked = rankLexically(
    query,
    all,
    (e) =>
      `${e.fields.type ?? ""} ${e.fields.message ?? ""} ${e.fields.node ?? ""} ${e.fields.workload ?? ""} ${e.fields.code ?? ""}`,
    (e) =>
      (0.5 + (0.5 * (e.timeMs - (ctx.now - span))) / span) *
      (e.fields.severity === "error" ? 1.5 : e.fields.severity === "warning" ? 1.2 : 1) *
      (cited.has(e.id) ? 2 : 1) *
      (e.fields.workload === ctx.workload.id ? 1.5 : 1),
  );
  return ranked.slice(0, 10).map((r) => eventEvidence(r.item, Math.round(r.score * 1000) / 1000));
}

function summarise(workload: api.Workload, causes: readonly api.Cause[]): string {
  const replicas = workload.status?.replicas.length ?? 0;
  const ready = workload.status?.readyReplicas ?? 0;
  const state = api
    .workloadStateToJSON(workload.status?.state ?? 0)
    .replace("WORKLOAD_STATE_", "")
    .toLowerCase();
  if (causes.length === 0)
    return `${workload.id} is ${state}: ${ready}/${replicas} replicas ready; nothing stands in the way.`;
  const chain = causes.map((c) => c.summary).join("; because ");
  const fix = causes.find((c) => c.remediation)?.remediation;
  return `${workload.id} is ${state} (${ready}/${replicas} ready): ${chain}.${fix ? ` Fix: ${fix}.` : ""}`;
}
