import { api, type ComposeService } from "@persys/schema";
import type { ContainerSnapshot, ObservedReason, ReplicaStateName } from "../docker/container-state.js";

/** A service's containers as seen now. */
export interface ServiceObservation {
  readonly service: ComposeService;
  readonly hash: string;
  readonly containers: readonly ContainerSnapshot[];
}

/** Whether a service is a one-shot that finished well: every container exited 0 and none restarts. */
export function completed(o: ServiceObservation): boolean {
  return (
    o.containers.length > 0 &&
    o.containers.every((c) => !c.running && !c.restarting && c.startedAt !== undefined && c.exitCode === 0) &&
    o.service.restart !== "always" &&
    o.service.restart !== "unless-stopped"
  );
}

function healthy(c: ContainerSnapshot): boolean {
  return c.running && (c.health === "none" || c.health === "healthy");
}

/** One service's roll-up: the wire status, the state it implies, and a typed reason when it failed. */
export interface ServiceRollup {
  readonly status: api.ComposeServiceStatus;
  readonly state: ReplicaStateName;
  /** FAILED only. */
  readonly reason?: ObservedReason;
  /** What the service waits for (STARTING), for the replica's message. */
  readonly note?: string;
}

/**
 * The status of one service: RUNNING when every desired container runs (and is healthy when it has
 * a healthcheck) or the service completed successfully; FAILED when a container is unhealthy, or
 * exited with an error under restart `no`; STARTING otherwise (containers missing, starting,
 * restarting). Reasons and notes name the service.
 */
export function serviceStatus(o: ServiceObservation): ServiceRollup {
  const s = o.service;
  const done = completed(o);
  const running = o.containers.filter((c) => c.running).length;
  const healthyCount = o.containers.filter(healthy).length;
  const unhealthy = o.containers.find((c) => c.running && c.health === "unhealthy");
  const failed = o.containers.find(
    (c) => !c.running && !c.restarting && c.startedAt !== undefined && (c.exitCode !== 0 || c.oomKilled),
  );
  let state: ReplicaStateName = "STARTING";
  let reason: ObservedReason | undefined;
  let note: string | undefined;
  if (s.replicas === 0 || done) state = "RUNNING";
  else if (unhealthy) {
    state = "FAILED";
    const output = unhealthy.healthOutput.trim().slice(0, 200);
    reason = {
      code: "UNHEALTHY",
      message: `service ${s.name}: container ${unhealthy.name} is unhealthy${output ? `: ${output}` : ""}`,
      retryable: true,
    };
  } else if (failed && s.restart === "no") {
    state = "FAILED";
    reason = failed.oomKilled
      ? {
          code: "OOM_KILLED",
          message: `service ${s.name}: container ${failed.name} was killed out of memory`,
          retryable: true,
        }
      : {
          code: "CONTAINER_EXITED",
          message: `service ${s.name}: container ${failed.name} exited with code ${failed.exitCode}`,
          retryable: true,
        };
  } else if (healthyCount >= s.replicas && o.containers.length === s.replicas) state = "RUNNING";
  else {
    const waiting = o.containers.find((c) => c.running && c.health === "starting");
    note = failed
      ? `service ${s.name}: container ${failed.name} exited with code ${failed.exitCode}; restarting (restart ${s.restart})`
      : waiting
        ? `service ${s.name}: waiting for container ${waiting.name} to become healthy`
        : `service ${s.name}: ${running}/${s.replicas} containers running`;
  }
  const why = reason ?? (note ? { code: undefined, message: note, retryable: true } : undefined);
  return {
    status: {
      name: s.name,
      desiredReplicas: s.replicas,
      runningReplicas: done ? s.replicas : running,
      healthyReplicas: done ? s.replicas : healthyCount,
      state: api.ReplicaState[`REPLICA_STATE_${state}`],
      ...(why
        ? {
            reason: {
              code: why.code ? api.ErrorCode[why.code] : api.ErrorCode.ERROR_CODE_UNSPECIFIED,
              message: why.message,
              retryable: why.retryable,
              attempts: 0,
            },
          }
        : {}),
      configHash: o.hash,
    },
    state,
    ...(reason ? { reason } : {}),
    ...(note ? { note } : {}),
  };
}
