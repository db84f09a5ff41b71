/**
 * The Persys scheduler: an explainable placement engine over an in-memory cluster snapshot.
 *
 * ```ts
 * import { ClusterSnapshot, PendingQueue, SchedulerEngine } from "./scheduler/index.js";
 *
 * const snapshot = new ClusterSnapshot();
 * for (const node of nodes) snapshot.upsertNode(node);
 * const engine = new SchedulerEngine(snapshot, { strategy: "bin-pack", seed: 42 });
 * const pending = new PendingQueue();
 *
 * for (const d of engine.place(request).decisions) {
 *   if (d.nodeId === null) pending.record(d.diagnosis); // "0/12 nodes are available: ..."
 * }
 * const change = snapshot.upsertNode(newNode);          // the cluster changed
 * for (const p of pending.retryCandidates(change)) { ... re-place p.workloadId ... }
 * engine.plan(request);                                  // dry run: same decisions, nothing reserved
 * ```
 */

export { defaultPipeline, defaultWeights, type ScorerWeights } from "./default-pipeline.js";
export {
  type DiagnosisFacts,
  renderDiagnosisMessage,
} from "./diagnosis/diagnosis-message.js";
export {
  type FilterFailure,
  MAX_FEASIBLE_VERDICTS,
  MAX_NODE_VERDICTS,
  MAX_PLACED_VERDICTS,
  MAX_RECORDED_FAILURES,
  type NodeVerdict,
  renderFilterDetail,
} from "./diagnosis/node-verdicts.js";
export type {
  Candidate,
  FilterCount,
  PlacementDiagnosis,
  ScoreEntry,
} from "./diagnosis/placement-diagnosis.js";
export { RecordedDiagnosis } from "./diagnosis/recorded-diagnosis.js";
export type { CompiledRequest } from "./framework/compiled-request.js";
export type { FilterStatus, NodeExplanation } from "./framework/node-explanation.js";
export { definePipeline, Pipeline } from "./framework/pipeline.js";
export {
  type Cycle,
  type Filter,
  type FilterDetail,
  type NodeFilter,
  type PipelineStage,
  type RejectSink,
  type ResourceExhaustion,
  type Scorer,
  type StaticFilter,
  scoreWith,
  type WeightedScorer,
} from "./framework/plugin.js";
export { Reason, type ReasonCode, type ReasonInfo, reasonCatalog, reasonsFixedBy } from "./framework/reasons.js";
export { adaptivePercentage, nodesToScore, type SamplingOptions } from "./framework/sampling.js";
export type { LabelExpression, LabelOperator, LabelSelector } from "./model/label-selector.js";
export type {
  PlacementRequest,
  PlacementRules,
  PreferredAffinityTerm,
  ReplicaAntiAffinity,
  SpreadConstraint,
} from "./model/placement-request.js";
export { validatePlacementRequest } from "./model/placement-request.js";
export type { Dimension, Resources } from "./model/resources.js";
export type { HostPort, SchedulerNode, WorkloadKind } from "./model/scheduler-node.js";
export { validateNode } from "./model/scheduler-node.js";
export { PendingQueue, type PendingReplica } from "./pending/pending-queue.js";
export type { AllocationStrategy } from "./plugins/resource-allocation-score.js";
export {
  type PlacementResult,
  type ReplicaDecision,
  SchedulerEngine,
  type SchedulerOptions,
} from "./scheduler-engine.js";
export type { ChangeAspect, ClusterChange, ReplicaRef } from "./snapshot/cluster-change.js";
export { ClusterSnapshot, type ReplicaPlacement } from "./snapshot/cluster-snapshot.js";
