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

/** Fields of a report that change with every heartbeat (measured use, transition time). */
const VOLATILE_FIELDS = new Set<string>(["cpuMillicoresUsed", "memoryBytesUsed", "lastTransitionAt"]);

/**
 * Whether two reports say the same apart from the fields that change every heartbeat: a heartbeat
 * whose reports all match the stored ones writes nothing. Compares the decoded messages field by
 * field (a missing field equals `undefined`, dates by time), without encoding either.
 */
export function sameReplicaReport(a: api.ReplicaReport, b: api.ReplicaReport): boolean {
  return sameFields(a as unknown as Record<string, unknown>, b as unknown as Record<string, unknown>, VOLATILE_FIELDS);
}

function sameFields(a: Record<string, unknown>, b: Record<string, unknown>, skip?: ReadonlySet<string>): boolean {
  for (const key in a) {
    if (!skip?.has(key) && !sameValue(a[key], b[key])) return false;
  }
  for (const key in b) {
    if (!(key in a) && !skip?.has(key) && b[key] !== undefined) return false;
  }
  return true;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (a instanceof Date || b instanceof Date) {
    return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameValue(a[i], b[i])) return false;
    return true;
  }
  return sameFields(a as Record<string, unknown>, b as Record<string, unknown>);
}
