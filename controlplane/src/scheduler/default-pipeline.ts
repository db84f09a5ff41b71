import { definePipeline, type Pipeline } from "./framework/pipeline.js";
import { scoreWith } from "./framework/plugin.js";
import { hostPortsFree } from "./plugins/host-ports.js";
import { measuredUtilisation } from "./plugins/measured-utilisation-score.js";
import { nodeAffinity } from "./plugins/node-affinity.js";
import { nodeReady } from "./plugins/node-ready.js";
import { preferredAffinity } from "./plugins/preferred-affinity-score.js";
import { replicaAntiAffinity } from "./plugins/replica-anti-affinity.js";
import { replicaMove } from "./plugins/replica-move.js";
import { replicaSpread } from "./plugins/replica-spread-score.js";
import { type AllocationStrategy, resourceAllocation } from "./plugins/resource-allocation-score.js";
import { resourcesFit } from "./plugins/resources-fit.js";
import { runtimeAndCapabilities } from "./plugins/runtime-capability.js";
import { topologySpreadFilter } from "./plugins/topology-spread-filter.js";
import { topologySpreadScore } from "./plugins/topology-spread-score.js";
import { workloadAntiAffinity } from "./plugins/workload-anti-affinity.js";

/** Weights of the default scorers; 0 turns a scorer off. */
export interface ScorerWeights {
  /** least-allocated or bin-pack, per the strategy. */
  readonly resourceAllocation?: number;
  readonly topologySpread?: number;
  readonly replicaSpread?: number;
  readonly preferredAffinity?: number;
  readonly measuredUtilisation?: number;
}

/** The weights used where none are given. */
export const defaultWeights: Required<ScorerWeights> = {
  resourceAllocation: 1,
  topologySpread: 2,
  replicaSpread: 2,
  preferredAffinity: 2,
  measuredUtilisation: 1,
};

/**
 * The scheduler's pipeline, in one list. Filters first: each sees every node and every failing
 * filter is counted (order only decides the order of statuses). Then the scorers, ranked by the
 * weighted mean of their 0..100 scores.
 */
export function defaultPipeline(options: { strategy?: AllocationStrategy; weights?: ScorerWeights } = {}): Pipeline {
  const w = { ...defaultWeights, ...options.weights };
  return definePipeline([
    // filters over static node properties, cached per node class
    nodeReady(),
    runtimeAndCapabilities(),
    nodeAffinity(),
    // filters per node, on placements
    topologySpreadFilter(),
    resourcesFit(),
    hostPortsFree(),
    replicaAntiAffinity(),
    workloadAntiAffinity(),
    replicaMove(),
    // scorers, weighted
    scoreWith(resourceAllocation(options.strategy ?? "least-allocated"), w.resourceAllocation),
    scoreWith(topologySpreadScore(), w.topologySpread),
    scoreWith(replicaSpread(), w.replicaSpread),
    scoreWith(preferredAffinity(), w.preferredAffinity),
    scoreWith(measuredUtilisation(), w.measuredUtilisation),
  ]);
}
