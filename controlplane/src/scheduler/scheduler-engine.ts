import { invalid, PersysError } from "@persys/schema";
import { defaultPipeline, type ScorerWeights } from "./default-pipeline.js";
import type { RecordedDiagnosis } from "./diagnosis/recorded-diagnosis.js";
import { type CompiledRequest, compileRequest } from "./framework/compiled-request.js";
import { explainNodes, type NodeExplanation } from "./framework/node-explanation.js";
import type { Pipeline } from "./framework/pipeline.js";
import type { SamplingOptions } from "./framework/sampling.js";
import { SchedulingCycle } from "./framework/scheduling-cycle.js";
import type { PlacementRequest } from "./model/placement-request.js";
import type { AllocationStrategy } from "./plugins/resource-allocation-score.js";
import type { ClusterSnapshot } from "./snapshot/cluster-snapshot.js";

/** Engine settings; every field has a default. */
export interface SchedulerOptions {
  /** Cluster setting: spread load (`least-allocated`, default) or fill nodes (`bin-pack`). */
  readonly strategy?: AllocationStrategy;
  readonly weights?: ScorerWeights;
  /** Seeds the rotation of scoring samples; same snapshot + seed + request → same decision. Default 0. */
  readonly seed?: number;
  readonly sampling?: SamplingOptions;
  /** Candidates kept per diagnosis, 1..20. Default 3. */
  readonly maxCandidates?: number;
  /** Milliseconds since the epoch, for `decidedAt`. Default `Date.now`. */
  readonly clock?: () => number;
  /** A custom pipeline instead of the default one (strategy and weights are then ignored). */
  readonly pipeline?: Pipeline;
}

/**
 * The decision for one replica: the node, or null when it stays pending, and why. The diagnosis
 * is a compact {@link RecordedDiagnosis}: read its fields, or `JSON.stringify` it / call `toJSON()`
 * for a plain object.
 */
export interface ReplicaDecision {
  readonly workloadId: string;
  readonly replica: number;
  readonly nodeId: string | null;
  readonly diagnosis: RecordedDiagnosis;
}

/** What `place` or `plan` decided for a request. */
export interface PlacementResult {
  readonly workloadId: string;
  readonly dryRun: boolean;
  /** One per replica that had no placement, in replica order. */
  readonly decisions: readonly ReplicaDecision[];
  /** Replicas that were already placed and were left alone. */
  readonly alreadyPlaced: readonly { readonly replica: number; readonly nodeId: string }[];
}

function validateOptions(o: SchedulerOptions): void {
  const v: { path: string; reason: string }[] = [];
  if (o.seed !== undefined && !Number.isSafeInteger(o.seed)) v.push({ path: "seed", reason: "must be an integer" });
  const k = o.maxCandidates;
  if (k !== undefined && (!Number.isInteger(k) || k < 1 || k > 20)) {
    v.push({ path: "maxCandidates", reason: "must be an integer from 1 to 20" });
  }
  const min = o.sampling?.minNodes;
  if (min !== undefined && (!Number.isInteger(min) || min < 1)) {
    v.push({ path: "sampling.minNodes", reason: "must be a positive integer" });
  }
  const pct = o.sampling?.percentage;
  if (pct !== undefined && !(pct > 0 && pct <= 100)) {
    v.push({ path: "sampling.percentage", reason: "must be more than 0 and at most 100" });
  }
  if (o.strategy !== undefined && o.strategy !== "least-allocated" && o.strategy !== "bin-pack") {
    v.push({ path: "strategy", reason: "must be least-allocated or bin-pack" });
  }
  if (v.length > 0) throw invalid("INVALID_CONFIG", v, "scheduler options");
}

/**
 * The placement engine: decides where replicas go on a {@link ClusterSnapshot} and explains
 * every decision. It owns no I/O; the control plane feeds the snapshot and persists results.
 *
 * ```ts
 * const snapshot = new ClusterSnapshot();
 * for (const node of nodes) snapshot.upsertNode(node);
 * const engine = new SchedulerEngine(snapshot, { strategy: "least-allocated", seed: 1 });
 * const result = engine.place({ workloadId: "web", kind: "container", replicas: 3,
 *   resources: { cpuMillicores: 500, memoryMiB: 512, diskGiB: 1 } });
 * for (const d of result.decisions) console.log(d.replica, d.nodeId, d.diagnosis.message);
 * ```
 *
 * Not safe for concurrent use (plugins keep per-cycle scratch state); one engine per snapshot.
 */
export class SchedulerEngine {
  private readonly runner: SchedulingCycle;

  constructor(
    readonly snapshot: ClusterSnapshot,
    options: SchedulerOptions = {},
  ) {
    validateOptions(options);
    const pipeline =
      options.pipeline ??
      defaultPipeline({
        ...(options.strategy ? { strategy: options.strategy } : {}),
        ...(options.weights ? { weights: options.weights } : {}),
      });
    this.runner = new SchedulingCycle(pipeline, snapshot, {
      seed: options.seed ?? 0,
      sampling: options.sampling ?? {},
      maxCandidates: options.maxCandidates ?? 3,
      clock: options.clock ?? Date.now,
    });
  }

  /** The pipeline in use. */
  get pipeline(): Pipeline {
    return this.runner.pipeline;
  }

  /** Number of request shapes in the static-filter cache. */
  get cachedShapes(): number {
    return this.runner.cachedShapes;
  }

  /** Validates (INVALID_SPEC on bad input) and compiles a request for repeated use. */
  compile(request: PlacementRequest): CompiledRequest {
    return compileRequest(request);
  }

  /**
   * Places every replica index in [0, replicas) that has no reservation yet, one decision per
   * replica in index order; each placed replica is reserved before the next is decided, so replica
   * k sees replicas 0..k−1 (resources, anti-affinity, spread, ports). A replica that fits nowhere
   * gets a diagnosis and no reservation (the caller keeps it pending). Already placed replicas
   * are left alone; scaling down is the caller's `release`.
   */
  place(request: PlacementRequest | CompiledRequest): PlacementResult {
    return this.run(this.compiled(request), false);
  }

  /**
   * Dry run: the same decisions `place` would make now, with the same diagnoses (replica k still
   * sees the tentative placements of 0..k−1), but nothing stays reserved and the snapshot's
   * generation is unchanged.
   */
  plan(request: PlacementRequest | CompiledRequest): PlacementResult {
    const compiled = this.compiled(request);
    return this.snapshot.tentative(() => this.run(compiled, true));
  }

  /**
   * Decides one replica and, if a node fits, reserves it there. CONFLICT if the replica is
   * already placed. The building block of `place` (and of benchmarks timing single decisions).
   */
  placeReplica(request: CompiledRequest, replica: number): ReplicaDecision {
    const held = this.snapshot.placementOf(request.workloadId, replica);
    if (held !== undefined) {
      throw new PersysError("CONFLICT", `replica ${request.workloadId}#${replica} is already placed on ${held}`);
    }
    const { diagnosis, winner } = this.runner.decide(request, replica);
    if (winner !== undefined) {
      this.snapshot.reserveCompiled({
        workloadId: request.workloadId,
        replica,
        entry: winner,
        resources: request.resources,
        portKeys: request.portKeys,
        traits: request.traits,
      });
    }
    return { workloadId: request.workloadId, replica, nodeId: winner?.id ?? null, diagnosis };
  }

  /**
   * Why replica `replica` of the request can or cannot go on one node now, filter by filter with
   * numbers. NOT_FOUND for an unknown node.
   */
  explainNode(request: PlacementRequest | CompiledRequest, nodeId: string, replica = 0): NodeExplanation {
    const entry = this.snapshot.entryOf(nodeId);
    if (entry === undefined) throw new PersysError("NOT_FOUND", `node ${nodeId} is not in the scheduler snapshot`);
    return explainNodes(this.runner, this.compiled(request), replica, [entry])[0]!;
  }

  /**
   * {@link explainNode} for every node, in slot order: the per-node view behind a diagnosis'
   * counts (O(nodes); for explanations, not for the decision path).
   */
  explainNodes(request: PlacementRequest | CompiledRequest, replica = 0): NodeExplanation[] {
    const entries = Array.from({ length: this.snapshot.nodeCount }, (_, slot) => this.snapshot.entryAt(slot));
    return explainNodes(this.runner, this.compiled(request), replica, entries);
  }

  private compiled(request: PlacementRequest | CompiledRequest): CompiledRequest {
    return "idHash" in request ? request : compileRequest(request);
  }

  private run(request: CompiledRequest, dryRun: boolean): PlacementResult {
    const decisions: ReplicaDecision[] = [];
    const alreadyPlaced: { replica: number; nodeId: string }[] = [];
    let failed: RecordedDiagnosis | undefined;
    for (let replica = 0; replica < request.replicas; replica++) {
      const nodeId = this.snapshot.placementOf(request.workloadId, replica);
      if (nodeId !== undefined) {
        alreadyPlaced.push({ replica, nodeId });
        continue;
      }
      // Nothing changed since a sibling found no node: the same filters give the same verdicts.
      if (failed !== undefined && failed.generation === this.snapshot.generation) {
        decisions.push({
          workloadId: request.workloadId,
          replica,
          nodeId: null,
          diagnosis: failed.forReplica(replica),
        });
        continue;
      }
      const decision = this.placeReplica(request, replica);
      if (decision.nodeId === null) failed = decision.diagnosis;
      decisions.push(decision);
    }
    return { workloadId: request.workloadId, dryRun, decisions, alreadyPlaced };
  }
}
