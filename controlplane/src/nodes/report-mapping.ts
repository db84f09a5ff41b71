import { api, control, isErrorCode } from "@persys/schema";

/** Replica state from a Go agent's state string (`Running`, `Stopped`, `Failed`, `Pending`, `Unknown`). */
export function stateFromGo(state: string): api.ReplicaState {
  switch (state.toLowerCase()) {
    case "running":
      return api.ReplicaState.REPLICA_STATE_RUNNING;
    case "stopped":
    case "exited":
      return api.ReplicaState.REPLICA_STATE_STOPPED;
    case "failed":
    case "error":
      return api.ReplicaState.REPLICA_STATE_FAILED;
    case "pending":
    case "creating":
    case "starting":
      return api.ReplicaState.REPLICA_STATE_STARTING;
    default:
      return api.ReplicaState.REPLICA_STATE_UNKNOWN;
  }
}

/** The Go state string for a replica state (what a Go agent or the Go CLI shows). */
export function stateToGo(state: api.ReplicaState): string {
  switch (state) {
    case api.ReplicaState.REPLICA_STATE_RUNNING:
      return "Running";
    case api.ReplicaState.REPLICA_STATE_STOPPED:
      return "Stopped";
    case api.ReplicaState.REPLICA_STATE_FAILED:
      return "Failed";
    case api.ReplicaState.REPLICA_STATE_PENDING:
    case api.ReplicaState.REPLICA_STATE_PLACED:
    case api.ReplicaState.REPLICA_STATE_STARTING:
      return "Pending";
    case api.ReplicaState.REPLICA_STATE_DELETING:
      return "Deleting";
    default:
      return "Unknown";
  }
}

const goFailure: Record<number, api.ErrorCode> = {
  [control.FailureReason.IMAGE_PULL_FAILED]: api.ErrorCode.IMAGE_PULL_FAILED,
  [control.FailureReason.IMAGE_NOT_FOUND]: api.ErrorCode.IMAGE_NOT_FOUND,
  [control.FailureReason.INSUFFICIENT_RESOURCES]: api.ErrorCode.UNSCHEDULABLE,
  [control.FailureReason.INVALID_SPEC]: api.ErrorCode.INVALID_SPEC,
  [control.FailureReason.RUNTIME_ERROR]: api.ErrorCode.RUNTIME_ERROR,
  [control.FailureReason.NETWORK_ERROR]: api.ErrorCode.NETWORK_ERROR,
  [control.FailureReason.STORAGE_ERROR]: api.ErrorCode.STORAGE_ERROR,
  [control.FailureReason.VM_BOOT_FAILED]: api.ErrorCode.VM_BOOT_FAILED,
};

/** The Go FailureReason nearest to an error code (what Go peers understand). */
export function failureReasonToGo(code: api.ErrorCode): control.FailureReason {
  for (const [go, ours] of Object.entries(goFailure)) if (ours === code) return Number(go) as control.FailureReason;
  return code === api.ErrorCode.ERROR_CODE_UNSPECIFIED
    ? control.FailureReason.FAILURE_REASON_UNSPECIFIED
    : control.FailureReason.RUNTIME_ERROR;
}

/** A replica report built from a Go agent's status (when the Persys extension is absent). */
export function reportFromGo(status: control.WorkloadStatus, workloadId: string, index: number): api.ReplicaReport {
  const reasonCode =
    status.reason?.code && isErrorCode(status.reason.code)
      ? api.errorCodeFromJSON(status.reason.code)
      : (goFailure[status.failureReason] ?? api.ErrorCode.ERROR_CODE_UNSPECIFIED);
  const state = stateFromGo(status.state);
  const hasReason = reasonCode !== api.ErrorCode.ERROR_CODE_UNSPECIFIED || status.message !== "";
  return api.ReplicaReport.fromPartial({
    workloadId,
    replicaIndex: index,
    state,
    reason: hasReason
      ? {
          code: reasonCode,
          message: status.reason?.message || status.message,
          retryable: status.reason?.retryable ?? false,
          ...(status.reason?.nextRetryAt ? { nextRetryAt: status.reason.nextRetryAt } : {}),
        }
      : undefined,
    ...(status.lastTransition ? { lastTransitionAt: status.lastTransition } : {}),
    cpuMillicoresUsed: status.usage ? status.usage.cpuPercent * 10 : 0,
    memoryBytesUsed: status.usage?.memoryBytes ?? 0,
  });
}

/** Canonical JSON of a report without the fields that change every heartbeat (usage, times). */
export function reportFingerprint(report: api.ReplicaReport): string {
  const { cpuMillicoresUsed: _c, memoryBytesUsed: _m, lastTransitionAt: _t, ...stable } = report;
  return JSON.stringify(api.ReplicaReport.toJSON({ ...stable, cpuMillicoresUsed: 0, memoryBytesUsed: 0 }));
}
