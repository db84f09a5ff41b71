/**
 * How a simulated replica is reported on the wire: the Go heartbeat `WorkloadStatus` (free-text state,
 * `FailureReason`, `ReasonDetail`), the agent `WorkloadStatus` (ActualState, Unix seconds, Go metadata
 * keys) and the Persys `ReplicaReport` extension carried in both.
 */
import { agent, api, control, type ErrorCode } from "@persys/schema";
import { agentWorkloadType } from "./assignment.js";
import type { ReplicaStateName, SimReason, SimReplica } from "./replica-runtime.js";

/** How reported usage is derived from reservations. */
export interface UsageModel {
  /** Share of its reservation a RUNNING replica is reported to use. */
  readonly usageFactor: number;
  /** Host address published ports are reported on. */
  readonly address: string;
}

const replicaStates: Record<ReplicaStateName, api.ReplicaState> = {
  STARTING: api.ReplicaState.REPLICA_STATE_STARTING,
  RUNNING: api.ReplicaState.REPLICA_STATE_RUNNING,
  STOPPED: api.ReplicaState.REPLICA_STATE_STOPPED,
  FAILED: api.ReplicaState.REPLICA_STATE_FAILED,
};

/** The Go agent's state strings. */
export const goStates: Record<ReplicaStateName, string> = {
  STARTING: "Pending",
  RUNNING: "Running",
  STOPPED: "Stopped",
  FAILED: "Failed",
};

const actualStates: Record<ReplicaStateName, agent.ActualState> = {
  STARTING: agent.ActualState.ACTUAL_STATE_PENDING,
  RUNNING: agent.ActualState.ACTUAL_STATE_RUNNING,
  STOPPED: agent.ActualState.ACTUAL_STATE_STOPPED,
  FAILED: agent.ActualState.ACTUAL_STATE_FAILED,
};

/** The Go `FailureReason` closest to an error code (`RUNTIME_ERROR` when the Go enum has no match). */
export function goFailureReason(code: ErrorCode): control.FailureReason {
  switch (code) {
    case "IMAGE_PULL_FAILED":
      return control.FailureReason.IMAGE_PULL_FAILED;
    case "IMAGE_NOT_FOUND":
      return control.FailureReason.IMAGE_NOT_FOUND;
    case "INVALID_SPEC":
      return control.FailureReason.INVALID_SPEC;
    case "NETWORK_ERROR":
      return control.FailureReason.NETWORK_ERROR;
    case "STORAGE_ERROR":
      return control.FailureReason.STORAGE_ERROR;
    case "VM_BOOT_FAILED":
      return control.FailureReason.VM_BOOT_FAILED;
    default:
      return control.FailureReason.RUNTIME_ERROR;
  }
}

function stateMessage(r: SimReplica): string {
  if (r.reason) return r.reason.message;
  switch (r.state) {
    case "STARTING":
      return "creating workload";
    case "RUNNING":
      return "running";
    case "STOPPED":
      return "stopped";
    case "FAILED":
      return "failed";
  }
}

function apiReason(reason: SimReason | undefined): api.Reason | undefined {
  if (!reason) return undefined;
  return {
    code: api.ErrorCode[reason.code],
    message: reason.message,
    retryable: reason.retryable,
    nextRetryAt: reason.nextRetryAt,
    attempts: 0,
    since: reason.since,
  };
}

/** A deterministic guest address for a simulated VM. */
function vmAddress(r: SimReplica): string {
  let h = 0;
  for (const c of r.runtimeId) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return `10.${(h >>> 16) & 255}.${(h >>> 8) & 255}.${(h & 253) + 2}`;
}

function endpointsOf(r: SimReplica, model: UsageModel): api.Endpoint[] {
  if (r.state !== "RUNNING") return [];
  const published = r.ports.map((p) => ({
    kind: api.EndpointKind.ENDPOINT_KIND_PUBLISHED_PORT,
    address: model.address,
    port: p.hostPort,
    targetPort: p.containerPort,
    protocol: p.protocol === "udp" ? api.Protocol.PROTOCOL_UDP : api.Protocol.PROTOCOL_TCP,
    network: "",
  }));
  if (r.kind !== "vm") return published;
  return [
    ...published,
    {
      kind: api.EndpointKind.ENDPOINT_KIND_VM_ADDRESS,
      address: vmAddress(r),
      port: 0,
      targetPort: 0,
      protocol: api.Protocol.PROTOCOL_UNSPECIFIED,
      network: "default",
    },
  ];
}

/** Measured use of a replica: a share of its reservation while it runs, else nothing. */
export function replicaUsage(r: SimReplica, model: UsageModel): { cpuMillicores: number; memoryMiB: number } {
  if (r.state !== "RUNNING") return { cpuMillicores: 0, memoryMiB: 0 };
  return {
    cpuMillicores: Math.round(r.resources.cpuMillicores * model.usageFactor),
    memoryMiB: Math.round(r.resources.memoryMiB * model.usageFactor),
  };
}

/** The Persys `ReplicaReport` of a replica. */
export function replicaReport(r: SimReplica, model: UsageModel): api.ReplicaReport {
  const used = replicaUsage(r, model);
  return {
    workloadId: r.workloadId,
    replicaIndex: r.index,
    state: replicaStates[r.state],
    reason: apiReason(r.reason),
    endpoints: endpointsOf(r, model),
    observedRevision: r.revision,
    assignmentGeneration: r.generation,
    restartCount: r.restartCount,
    startedAt: r.startedAt,
    lastTransitionAt: r.lastTransitionAt,
    cpuMillicoresUsed: used.cpuMillicores,
    memoryBytesUsed: used.memoryMiB * 1048576,
    runtimeId: r.runtimeId,
    services: [],
    sourceCommit: "",
  };
}

/** The Go heartbeat status of a replica, keyed by the id the control plane applied it under. */
export function goWorkloadStatus(r: SimReplica): control.WorkloadStatus {
  return {
    workloadId: r.agentId,
    state: goStates[r.state],
    failureReason:
      r.state === "FAILED" && r.reason
        ? goFailureReason(r.reason.code)
        : control.FailureReason.FAILURE_REASON_UNSPECIFIED,
    message: stateMessage(r),
    lastTransition: r.lastTransitionAt,
    reason: r.reason
      ? {
          code: r.reason.code,
          message: r.reason.message,
          lastTransition: r.reason.since,
          nextRetryAt: r.reason.nextRetryAt,
          retryable: r.reason.retryable,
        }
      : undefined,
    usage: undefined,
  };
}

const seconds = (d: Date | undefined): number => (d ? Math.floor(d.getTime() / 1000) : 0);

/** The agent `WorkloadStatus` of a replica (GetWorkloadStatus, ListWorkloads, ApplyWorkload). */
export function agentWorkloadStatus(r: SimReplica, model: UsageModel): agent.WorkloadStatus {
  const metadata: Record<string, string> = {
    "persys.workload": r.workloadId,
    "persys.replica": String(r.index),
    "persys.generation": String(r.generation),
    "container.id": r.runtimeId,
    restart_count: String(r.restartCount),
  };
  if (r.reason) {
    metadata.failure_reason = r.reason.code;
    metadata.failure_message = r.reason.message;
    metadata.retryable = String(r.reason.retryable);
    if (r.reason.nextRetryAt) metadata.retry_next_at = r.reason.nextRetryAt.toISOString();
    if (!r.reason.retryable && r.state === "FAILED") metadata.retry_terminal = "true";
  }
  return {
    id: r.agentId,
    type: agentWorkloadType(r.kind),
    revisionId: r.revision,
    desiredState:
      r.desired === "stopped" ? agent.DesiredState.DESIRED_STATE_STOPPED : agent.DesiredState.DESIRED_STATE_RUNNING,
    actualState: actualStates[r.state],
    message: stateMessage(r),
    createdAt: seconds(r.createdAt),
    updatedAt: seconds(r.lastTransitionAt),
    metadata,
    usage: undefined,
    persys: replicaReport(r, model),
  };
}
