/**
 * The `persys.agent.v1.AgentService` behaviour of one simulated node, transport-free: each method takes
 * the request message and returns the response message, or throws an `AgentCallError` carrying the
 * gRPC status the Go agent would answer with.
 */
import { status as grpcStatus } from "@grpc/grpc-js";
import { agent } from "@persys/schema";
import { ActionLog } from "./action-log.js";
import { agentWorkloadType, parseAssignment } from "./assignment.js";
import { runtimesOf, type SimNodeDescription, simAgentVersion } from "./node-description.js";
import type { DeletedReplica, ReplicaRuntime } from "./replica-runtime.js";
import { agentWorkloadStatus, type UsageModel } from "./wire-reports.js";

/** A replica an apply stopped; `state` is the state it was stopped from. */
export type StoppedReplica = DeletedReplica;

/** A failed call, with the gRPC status code to answer. */
export class AgentCallError extends Error {
  constructor(
    readonly code: grpcStatus,
    message: string,
  ) {
    super(message);
    this.name = "AgentCallError";
  }
}

/** What a node has been asked to do, for assertions. */
export interface AgentCounters {
  /** Every ApplyWorkload call received, whatever its outcome. */
  applies: number;
  /** Applies that changed something (created, re-created, started or stopped a replica). */
  applied: number;
  /** Applies answered `skipped` (same revision and state). */
  skipped: number;
  /** Applies refused: invalid, stale generation, or an injected `at: "apply"` failure. */
  rejected: number;
  /** Replicas removed by DeleteWorkload. */
  deleted: number;
  /** DeleteWorkload calls that found nothing to remove. */
  deletedMissing: number;
}

/** The AgentService of one simulated node over its runtime. */
export class NodeAgent {
  readonly counters: AgentCounters = { applies: 0, applied: 0, skipped: 0, rejected: 0, deleted: 0, deletedMissing: 0 };
  /** Every replica DeleteWorkload removed, oldest first. */
  readonly deletions: DeletedReplica[] = [];
  /** Every replica an apply with desired STOPPED stopped (it was not stopped before), oldest first. */
  readonly stops: StoppedReplica[] = [];
  readonly actions: ActionLog;
  private readonly version: string;

  constructor(
    private readonly node: SimNodeDescription,
    readonly runtime: ReplicaRuntime,
    private readonly model: UsageModel,
    options: { actionLogSize?: number; agentVersion?: string } = {},
  ) {
    this.actions = new ActionLog(options.actionLogSize);
    this.version = options.agentVersion ?? simAgentVersion;
  }

  /** ApplyWorkload: idempotent by revision; never a gRPC error, failures are in the response. */
  applyWorkload(req: agent.ApplyWorkloadRequest): agent.ApplyWorkloadResponse {
    this.counters.applies++;
    const parsed = parseAssignment(req);
    if ("invalid" in parsed) {
      this.counters.rejected++;
      this.actions.record("apply_workload", req.id, "failed", parsed.invalid);
      return { applied: false, skipped: false, message: parsed.invalid, status: undefined };
    }
    if (!runtimesOf(this.node).includes(parsed.kind)) {
      const message = `runtime ${parsed.kind} is not available on node ${this.node.id}`;
      this.counters.rejected++;
      this.actions.record("apply_workload", parsed.agentId, "failed", message);
      return { applied: false, skipped: false, message, status: undefined };
    }
    const before = this.runtime.get(parsed.workloadId, parsed.index);
    const outcome = this.runtime.apply(parsed);
    const after = outcome.replica;
    if (before && before.state !== "STOPPED" && after?.state === "STOPPED" && outcome.applied) {
      this.stops.push({
        agentId: after.agentId,
        workloadId: after.workloadId,
        index: after.index,
        generation: after.generation,
        revision: after.revision,
        state: before.state,
        at: new Date(),
      });
    }
    const status = outcome.replica ? agentWorkloadStatus(outcome.replica, this.model) : undefined;
    if (outcome.skipped) {
      this.counters.skipped++;
      this.actions.record("apply_workload", parsed.agentId, "skipped");
    } else if (outcome.applied) {
      this.counters.applied++;
      this.actions.record("apply_workload", parsed.agentId, "completed");
    } else {
      this.counters.rejected++;
      this.actions.record("apply_workload", parsed.agentId, "failed", outcome.message);
    }
    return { applied: outcome.applied, skipped: outcome.skipped, message: outcome.message, status };
  }

  /** DeleteWorkload: removes the replicas the id names; removing nothing succeeds too. */
  deleteWorkload(req: agent.DeleteWorkloadRequest): agent.DeleteWorkloadResponse {
    const removed = this.runtime.delete(req.id);
    this.deletions.push(...removed);
    this.counters.deleted += removed.length;
    if (removed.length === 0) this.counters.deletedMissing++;
    this.actions.record("delete_workload", req.id, "completed");
    return {
      success: true,
      message: removed.length === 0 ? `workload ${req.id} not found; nothing to delete` : `deleted ${removed.length}`,
    };
  }

  /** GetWorkloadStatus: NOT_FOUND "status not found" for an id the node does not run, as the Go agent. */
  getWorkloadStatus(req: agent.GetWorkloadStatusRequest): agent.GetWorkloadStatusResponse {
    const replica = this.runtime.find(req.id);
    if (!replica) throw new AgentCallError(grpcStatus.NOT_FOUND, `status not found for workload ${req.id}`);
    return { status: agentWorkloadStatus(replica, this.model) };
  }

  /** ListWorkloads: every replica, or those of one type. */
  listWorkloads(req: agent.ListWorkloadsRequest): agent.ListWorkloadsResponse {
    const all = this.runtime.replicas();
    const wanted =
      req.type === agent.WorkloadType.WORKLOAD_TYPE_UNSPECIFIED
        ? all
        : all.filter((r) => agentWorkloadType(r.kind) === req.type);
    return { workloads: wanted.map((r) => agentWorkloadStatus(r, this.model)) };
  }

  /** HealthCheck: always healthy; utilisation is reservations over allocatable, in percent. */
  healthCheck(): agent.HealthCheckResponse {
    const alloc = this.node.allocatable ?? this.node.capacity;
    let cpu = 0;
    let mem = 0;
    let disk = 0;
    for (const r of this.runtime.replicas()) {
      if (r.state === "STOPPED" || r.state === "FAILED") continue;
      cpu += r.resources.cpuMillicores;
      mem += r.resources.memoryMiB;
      disk += r.resources.diskGiB;
    }
    const pct = (used: number, total: number) => (total > 0 ? (100 * used) / total : 0);
    return {
      healthy: true,
      version: this.version,
      runtimeStatus: Object.fromEntries(runtimesOf(this.node).map((k) => [k, "healthy"])),
      cpuUtilization: pct(cpu, alloc.cpuMillicores),
      memoryUtilization: pct(mem, alloc.memoryMiB),
      diskUtilization: pct(disk, alloc.diskGiB),
    };
  }

  /** ListActions: the bounded action log, filtered. */
  listActions(req: agent.ListActionsRequest): agent.ListActionsResponse {
    return { actions: this.actions.list(req) };
  }
}
