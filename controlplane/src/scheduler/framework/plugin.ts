import type { Dimension } from "../model/resources.js";
import type { ClusterSnapshot } from "../snapshot/cluster-snapshot.js";
import type { NodeClass } from "../snapshot/node-classes.js";
import type { WorkloadRecord } from "../snapshot/workload-index.js";
import type { CompiledRequest } from "./compiled-request.js";
import type { ReasonCode } from "./reasons.js";

/**
 * The numbers behind a rejection (the structured sidecar of a status): what was asked, what the
 * node has free, what it could offer at all, in which unit, and for non-numeric reasons the
 * subject (`kvm`, `tcp/8080`, `zone`).
 */
export interface FilterDetail {
  readonly requested?: number;
  readonly free?: number;
  readonly allocatable?: number;
  readonly capacity?: number;
  readonly unit?: string;
  readonly subject?: string;
}

/** How short the cluster is on one dimension, over the nodes that failed it. */
export interface ResourceExhaustion {
  readonly dimension: Dimension;
  /** What one replica requests. */
  readonly needed: number;
  /** The most free among the nodes short of this dimension. */
  readonly bestAvailable: number;
  readonly unit: string;
  /** How many nodes have less free than needed. */
  readonly nodesShort: number;
}

/**
 * The state of one scheduling decision that plugins may read: the snapshot, the request, which
 * replica, and what the framework has established so far.
 */
export interface Cycle {
  readonly snapshot: ClusterSnapshot;
  readonly request: CompiledRequest;
  readonly replica: number;
  /** Unique per cycle; lets plugins keep stamp arrays instead of clearing scratch memory. */
  readonly id: number;
  /** Per class id: 1 when the class passes every static filter (valid for every class). */
  readonly staticOk: Uint8Array;
  /** The request's workload, when it has placed replicas (siblings of this replica). */
  readonly workload: WorkloadRecord | undefined;
}

/**
 * Where node-scoped filters report rejections. `reason` is the index of the code in the plugin's
 * `reasons`; the framework stamps the plugin. A plugin rejects a node at most once per reason.
 */
export interface RejectSink {
  /** The node in `slot` fails `reason`. */
  reject(slot: number, reason: number): void;
  /**
   * Every node outside `passing` (a bitset over slots, see `node-bitset.ts`) fails `reason`;
   * `failing` is how many nodes that is. Lets dense filters answer with a set, not a node loop.
   */
  rejectAllBut(passing: Uint32Array, reason: number, failing: number): void;
  /** Every node in `failing` (a bitset over slots) fails `reason`; `count` is how many there are. */
  rejectAll(failing: Uint32Array, reason: number, count: number): void;
}

interface FilterBase {
  /** Stamped on every count and status the filter produces. */
  readonly name: string;
  /** Every reason the filter can give; bit i of a verdict mask means `reasons[i]`. */
  readonly reasons: readonly ReasonCode[];
  /** For messages: what the reason is about for this request (`kvm`, `tcp/8080`), if anything. */
  subject?(request: CompiledRequest, reason: number): string | undefined;
}

/**
 * A filter over static node properties only (a {@link NodeClass}): its verdict is cached per
 * class and per `cacheKey`, so it must be a pure function of the class and the request fields
 * that `cacheKey` covers.
 */
export interface StaticFilter extends FilterBase {
  readonly scope: "static";
  /** The request fields the verdict depends on, as text. */
  cacheKey(request: CompiledRequest): string;
  /** Bitmask of failed reasons for members of `cls`; 0 passes. */
  check(cls: NodeClass, request: CompiledRequest): number;
}

/**
 * A filter evaluated per node, on state that changes with placements. `run` rejects every failing
 * node through the sink — one by one for the few it knows (sparse), or as a bitset (dense) — and
 * must not loop over all nodes; `check` answers for one node and must agree with `run` (a
 * property test holds them to it).
 */
export interface NodeFilter extends FilterBase {
  readonly scope: "node";
  prepare(cycle: Cycle): boolean;
  run(cycle: Cycle, sink: RejectSink): void;
  check(cycle: Cycle, slot: number): number;
  /** The numbers behind a rejection of the node in `slot`. */
  detail?(cycle: Cycle, slot: number, reason: number): FilterDetail | undefined;
  /** After `run`: per-dimension shortage, for resource filters (may be reused by the next cycle). */
  exhaustion?(cycle: Cycle): ResourceExhaustion[];
}

/** Any filter. */
export type Filter = StaticFilter | NodeFilter;

/**
 * A scorer: 0..100 per node, higher is better, integer. Only a sample of the feasible nodes is
 * scored on large clusters, so a score must not depend on which other nodes are in the sample.
 */
export interface Scorer {
  readonly name: string;
  /** Sets up the cycle; false when the scorer has nothing to say for this request (skipped). */
  prepare(cycle: Cycle): boolean;
  /** Writes the score of node `slots[j]` into `out[j]` for j < count. */
  score(cycle: Cycle, slots: Int32Array, count: number, out: Float64Array): void;
}

/** A scorer with its weight in the weighted mean that ranks candidates. */
export interface WeightedScorer {
  readonly scope: "score";
  readonly scorer: Scorer;
  readonly weight: number;
}

/** One entry of the pipeline list. */
export type PipelineStage = Filter | WeightedScorer;

/** Puts a scorer into the pipeline with a weight (0 disables it). */
export function scoreWith(scorer: Scorer, weight: number): WeightedScorer {
  return { scope: "score", scorer, weight };
}
