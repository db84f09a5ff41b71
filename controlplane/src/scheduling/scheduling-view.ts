import type { api } from "@persys/schema";
import type { ClusterState, StateChange } from "../cluster/cluster-state.js";
import { type AssignmentRecord, type NodeRecord, type WorkloadRecord, workloadOf } from "../cluster/records.js";
import { placementRequest, schedulerNode } from "../cluster/scheduler-mapping.js";
import type { UsageRecorder } from "../nodes/usage-recorder.js";
import {
  type AllocationStrategy,
  type ClusterChange,
  ClusterSnapshot,
  type CompiledRequest,
  PendingQueue,
  type PlacementResult,
  type ReplicaDecision,
  SchedulerEngine,
} from "../scheduler/index.js";

/**
 * The scheduler's picture of the cluster on one server: the engine's snapshot (nodes and the
 * reservations of every assignment) kept in step with the cluster state's change feed, the pending
 * queue, and compiled requests per workload revision. Every server keeps one so Plan and Explain
 * answer anywhere; only the leader places through it.
 */
export class SchedulingView {
  readonly snapshot = new ClusterSnapshot();
  readonly engine: SchedulerEngine;
  readonly pending = new PendingQueue();
  private readonly compiledCache = new Map<string, { revision: string; compiled: CompiledRequest }>();
  private readonly changeListeners = new Set<(change: ClusterChange) => void>();
  private unsubscribe: (() => void) | undefined;
  /** Nodes the scheduler refused, with why (shown in node conditions). */
  readonly rejected = new Map<string, string>();

  constructor(
    private readonly state: ClusterState,
    private readonly usage: UsageRecorder | undefined,
    options: { strategy?: AllocationStrategy; seed?: number } = {},
  ) {
    this.engine = new SchedulerEngine(this.snapshot, {
      ...(options.strategy ? { strategy: options.strategy } : {}),
      seed: options.seed ?? 1,
    });
  }

  /** Loads nodes and assignments from the cluster state and follows its changes. */
  start(): void {
    for (const id of this.state.nodes.keys()) this.syncNode(id);
    for (const a of this.state.assignments.values()) this.syncAssignment(a.value);
    this.unsubscribe = this.state.onChange((change) => this.apply(change));
  }

  stop(): void {
    this.unsubscribe?.();
  }

  /** Called with every snapshot change that may help pending replicas. */
  onClusterChange(listener: (change: ClusterChange) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** The compiled placement request of a workload at its current revision. */
  compiled(record: WorkloadRecord, workload: api.Workload = workloadOf(record)): CompiledRequest {
    const cached = this.compiledCache.get(workload.id);
    if (cached && cached.revision === `${record.revision}/${workload.replicas}`) return cached.compiled;
    const compiled = this.engine.compile(placementRequest(workload));
    this.compiledCache.set(workload.id, { revision: `${record.revision}/${workload.replicas}`, compiled });
    return compiled;
  }

  /**
   * Where a placed replica would go if it were moved now: off every node in `move.leaving` (onto
   * `move.target` only, if set), decided by the ordinary pipeline with the `replica-move` filter.
   * With `keep`, a found node stays reserved (the leader, before it writes the assignment);
   * otherwise, and whenever no node fits, the replica's current reservation is restored.
   */
  decideMove(
    record: WorkloadRecord,
    assignment: AssignmentRecord,
    move: { leaving: readonly string[]; target?: string },
    keep: boolean,
  ): ReplicaDecision {
    const compiled: CompiledRequest = { ...this.compiled(record), move };
    this.release(assignment.workloadId, assignment.index);
    let decision: ReplicaDecision | undefined;
    try {
      decision = keep
        ? this.engine.placeReplica(compiled, assignment.index)
        : this.snapshot.tentative(() => this.engine.placeReplica(compiled, assignment.index));
      return decision;
    } finally {
      if (!keep || !decision?.nodeId) this.syncAssignment(assignment);
    }
  }

  /** Dry run of a workload as it would be placed now: nothing is reserved. */
  plan(workload: api.Workload): PlacementResult {
    return this.engine.plan(placementRequest(workload));
  }

  /** Refreshes one node from its record, liveness and latest usage. */
  syncNode(nodeId: string): void {
    const record = this.state.nodes.get(nodeId)?.value;
    if (!record) {
      const change = this.snapshot.node(nodeId) ? this.snapshot.removeNode(nodeId) : undefined;
      if (change) this.emit(change);
      return;
    }
    this.upsert(record);
  }

  private upsert(record: NodeRecord): void {
    const node = schedulerNode(record, this.state.isLive(record.id), this.usage?.latestResources(record.id));
    try {
      this.emit(this.snapshot.upsertNode(node));
    } catch (error) {
      // A node record the scheduler rejects (malformed report) simply takes no part in scheduling.
      this.rejected.set(record.id, error instanceof Error ? error.message : String(error));
    }
  }

  /** Makes the snapshot hold exactly this assignment's reservation. */
  syncAssignment(a: AssignmentRecord): void {
    const held = this.snapshot.placementOf(a.workloadId, a.index);
    if (held === a.nodeId) return;
    if (held !== undefined) this.release(a.workloadId, a.index);
    const workload = this.state.workloads.get(a.workloadId)?.value;
    if (!workload || !this.snapshot.node(a.nodeId)) return;
    const request = placementRequest(workloadOf(workload));
    try {
      this.snapshot.reserve({
        workloadId: a.workloadId,
        replica: a.index,
        nodeId: a.nodeId,
        resources: request.resources,
        hostPorts: request.hostPorts ?? [],
        labels: request.labels ?? {},
        antiAffinity: request.placement?.antiAffinity?.workloads ?? [],
      });
    } catch {
      // Already reserved by a concurrent path: the snapshot keeps one reservation per replica.
    }
  }

  release(workloadId: string, index: number): void {
    const change = this.snapshot.release(workloadId, index);
    if (change) this.emit(change);
  }

  private apply(change: StateChange): void {
    const { key } = change;
    if (key.kind === "node" || key.kind === "liveness") this.syncNode(key.nodeId!);
    else if (key.kind === "assignment") {
      if (change.type === "put") this.syncAssignment(change.current as AssignmentRecord);
      else this.release(key.workloadId!, key.index!);
    } else if (key.kind === "workload" && change.type === "delete") {
      this.compiledCache.delete(key.workloadId!);
      this.pending.removeWorkload(key.workloadId!);
    }
  }

  private emit(change: ClusterChange): void {
    for (const listener of this.changeListeners) listener(change);
  }
}
