import { api } from "@persys/schema";

/** What the leader remembers per replica between reconciles (in memory; rebuilt from reports). */
export interface ReplicaProgress {
  /** Agent revision and desired state last pushed, and when. */
  pushed?: { agentRevision: string; desiredState: api.DesiredState; at: number };
  /** Failures of the current agent revision. */
  attempts: number;
  /** No push before this time (backoff). */
  nextRetryAt: number;
  /** Agent revision the failures are about. */
  failedRevision?: string;
  /** A non-retryable failure at `failedRevision`: no push until the spec changes or Retry. */
  terminal: boolean;
  /** The failure reported after the last push has been counted. */
  failureNoted?: boolean;
}

export const newProgress = (): ReplicaProgress => ({ attempts: 0, nextRetryAt: 0, terminal: false });

/** Whether a reported state satisfies the desired one. */
export function stateMeets(state: api.ReplicaState, desired: api.DesiredState): boolean {
  return desired === api.DesiredState.DESIRED_STATE_STOPPED
    ? state === api.ReplicaState.REPLICA_STATE_STOPPED
    : state === api.ReplicaState.REPLICA_STATE_RUNNING;
}

/** States in which the agent is still working on the last push (no re-push yet). */
export function inProgress(state: api.ReplicaState): boolean {
  return (
    state === api.ReplicaState.REPLICA_STATE_PLACED ||
    state === api.ReplicaState.REPLICA_STATE_STARTING ||
    state === api.ReplicaState.REPLICA_STATE_STOPPING
  );
}

const terminalCodes = new Set<api.ErrorCode>([
  api.ErrorCode.IMAGE_NOT_FOUND,
  api.ErrorCode.INVALID_SPEC,
  api.ErrorCode.PORT_CONFLICT,
  api.ErrorCode.PERMISSION_DENIED,
]);

/** Whether a failure reason must not be retried blindly (only a spec change or Retry helps). */
export function isTerminal(reason: api.Reason | undefined): boolean {
  if (!reason) return false;
  return terminalCodes.has(reason.code) || (reason.code !== api.ErrorCode.ERROR_CODE_UNSPECIFIED && !reason.retryable);
}
