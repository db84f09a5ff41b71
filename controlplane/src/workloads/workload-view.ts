import { api } from "@persys/schema";
import type { ClusterState, Versioned } from "../cluster/cluster-state.js";
import { replicaName } from "../cluster/keys.js";
import { agentRevisionOf, reportOf, type WorkloadRecord, workloadOf } from "../cluster/records.js";
import { secretRevisionSuffix, withSecretRevision } from "../secrets/secret-references.js";

const S = api.ReplicaState;

/** One replica's status from its assignment, pending record and latest report. */
export function replicaStatus(
  state: ClusterState,
  record: WorkloadRecord,
  workloadId: string,
  index: number,
  full: boolean,
): api.ReplicaStatus {
  const assignment = state.assignment(workloadId, index);
  const pending = state.pendingOf(workloadId, index)?.value;
  const status = state.status(workloadId, index)?.value;
  const base = api.ReplicaStatus.fromPartial({ index, name: replicaName(workloadId, index) });
  if (!assignment) {
    const diagnosis = pending ? api.PlacementDiagnosis.fromJSON(pending.diagnosis) : undefined;
    return {
      ...base,
      state: S.REPLICA_STATE_PENDING,
      reason: diagnosis
        ? {
            code: api.ErrorCode.UNSCHEDULABLE,
            message: diagnosis.message,
            retryable: true,
            attempts: 0,
            since: new Date(pending!.since),
          }
        : {
            code: api.ErrorCode.ERROR_CODE_UNSPECIFIED,
            message: "waiting for the scheduler",
            retryable: true,
            attempts: 0,
          },
      ...(full && diagnosis ? { placement: diagnosis } : {}),
    };
  }
  const a = assignment.value;
  const placement = full ? api.PlacementDiagnosis.fromJSON(a.diagnosis) : undefined;
  const report = status && status.nodeId === a.nodeId ? reportOf(status) : undefined;
  const live = state.isLive(a.nodeId);
  const expected = withSecretRevision(agentRevisionOf(record, a), secretRevisionSuffix(state, record));
  let replicaState = report?.state ?? S.REPLICA_STATE_PLACED;
  let reason = report?.reason;
  if (!live && replicaState !== S.REPLICA_STATE_UNKNOWN) {
    replicaState = S.REPLICA_STATE_UNKNOWN;
    reason = {
      code: api.ErrorCode.NODE_LOST,
      message: `node ${a.nodeId} is not reporting`,
      retryable: true,
      attempts: 0,
    };
  }
  if (!reason && replicaState === S.REPLICA_STATE_PLACED) {
    reason = {
      code: api.ErrorCode.ERROR_CODE_UNSPECIFIED,
      message: `placed on ${a.nodeId}; waiting for the agent`,
      retryable: true,
      attempts: 0,
    };
  }
  if (record.deletionRequestedAt) replicaState = S.REPLICA_STATE_DELETING;
  return {
    ...base,
    nodeId: a.nodeId,
    state: replicaState,
    ...(reason ? { reason } : {}),
    endpoints: report?.endpoints ?? [],
    observedRevision: report?.observedRevision ?? "",
    assignmentGeneration: assignment.createRevision,
    ...(placement ? { placement } : {}),
    restartCount: report?.restartCount ?? 0,
    services: report?.services ?? [],
    sourceCommit: report?.sourceCommit ?? "",
    ...(report?.startedAt ? { startedAt: report.startedAt } : {}),
    ...(report?.lastTransitionAt ? { lastTransitionAt: report.lastTransitionAt } : {}),
    ...(report && report.observedRevision !== expected && replicaState === S.REPLICA_STATE_RUNNING
      ? {
          reason: {
            code: api.ErrorCode.ERROR_CODE_UNSPECIFIED,
            message: `running revision ${report.observedRevision}; update to ${expected} pending`,
            retryable: true,
            attempts: 0,
          },
        }
      : {}),
  };
}

function rollup(record: WorkloadRecord, workload: api.Workload, replicas: api.ReplicaStatus[]): api.WorkloadState {
  const W = api.WorkloadState;
  if (record.deletionRequestedAt) return W.WORKLOAD_STATE_DELETING;
  const count = (s: api.ReplicaState) => replicas.filter((r) => r.state === s).length;
  if (workload.desiredState === api.DesiredState.DESIRED_STATE_STOPPED) {
    return count(S.REPLICA_STATE_STOPPED) === replicas.length ? W.WORKLOAD_STATE_STOPPED : W.WORKLOAD_STATE_PROGRESSING;
  }
  const running = replicas.filter(
    (r) => r.state === S.REPLICA_STATE_RUNNING && r.observedRevision.startsWith(record.revision),
  ).length;
  if (replicas.length === 0 || running === replicas.length) return W.WORKLOAD_STATE_RUNNING;
  if (count(S.REPLICA_STATE_PENDING) === replicas.length) return W.WORKLOAD_STATE_PENDING;
  if (running === 0 && count(S.REPLICA_STATE_FAILED) > 0) return W.WORKLOAD_STATE_FAILED;
  if (
    running > 0 &&
    (count(S.REPLICA_STATE_FAILED) > 0 || count(S.REPLICA_STATE_PENDING) > 0 || count(S.REPLICA_STATE_UNKNOWN) > 0)
  ) {
    return W.WORKLOAD_STATE_DEGRADED;
  }
  return W.WORKLOAD_STATE_PROGRESSING;
}

/**
 * The API view of a stored workload: its input fields plus a status assembled from assignments,
 * pending diagnoses and reports. `full` includes each replica's placement diagnosis.
 */
export function workloadView(state: ClusterState, held: Versioned<WorkloadRecord>, full: boolean): api.Workload {
  const record = held.value;
  const workload = workloadOf(record);
  const count = workload.replicas ?? 1;
  const replicas: api.ReplicaStatus[] = [];
  for (let index = 0; index < count; index++) replicas.push(replicaStatus(state, record, workload.id, index, full));
  const stateRollup = rollup(record, workload, replicas);
  const ready = replicas.filter(
    (r) => r.state === S.REPLICA_STATE_RUNNING && r.observedRevision.startsWith(record.revision),
  ).length;
  const settled =
    stateRollup === api.WorkloadState.WORKLOAD_STATE_RUNNING ||
    stateRollup === api.WorkloadState.WORKLOAD_STATE_STOPPED;
  return {
    ...workload,
    status: {
      revision: record.revision,
      generation: record.generation,
      observedGeneration: settled ? record.generation : Math.max(0, record.generation - 1),
      state: stateRollup,
      readyReplicas: ready,
      replicas,
      conditions: [],
      createdAt: new Date(record.createdAt),
      updatedAt: new Date(record.updatedAt),
    },
  };
}
