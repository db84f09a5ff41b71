import type { ErrorCode } from "@persys/schema";
import type Docker from "dockerode";
import type { DesiredState } from "../../replicas/desired-replica.js";

/** The parts of `docker inspect` the agent reads. */
export interface ContainerSnapshot {
  readonly id: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly status: string;
  readonly running: boolean;
  readonly restarting: boolean;
  readonly oomKilled: boolean;
  readonly exitCode: number;
  /** The daemon's error for the last start (e.g. a port binding failure). */
  readonly error: string;
  readonly health: "none" | "starting" | "healthy" | "unhealthy";
  /** Output of the last failing healthcheck probe. */
  readonly healthOutput: string;
  readonly failingStreak: number;
  readonly startedAt?: Date;
  readonly finishedAt?: Date;
  readonly restartCount: number;
  readonly memoryLimitBytes: number;
  /** Published ports as bound. */
  readonly ports: readonly { containerPort: number; protocol: "tcp" | "udp"; hostIp: string; hostPort: number }[];
}

/** A replica state name (the api.v1 ReplicaState without prefix). */
export type ReplicaStateName = "STARTING" | "RUNNING" | "STOPPING" | "STOPPED" | "FAILED" | "DELETING";

export interface ObservedReason {
  readonly code: ErrorCode;
  readonly message: string;
  readonly retryable: boolean;
}

export interface ObservedState {
  readonly state: ReplicaStateName;
  readonly reason?: ObservedReason;
}

function time(value: string | undefined): Date | undefined {
  if (!value || value.startsWith("0001-")) return undefined;
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : new Date(t);
}

/** Reads the fields the agent needs from `docker inspect`. */
export function snapshotOf(info: Docker.ContainerInspectInfo): ContainerSnapshot {
  const state = info.State;
  const health = state.Health;
  const log = health?.Log ?? [];
  const lastFailure = [...log].reverse().find((entry) => entry.ExitCode !== 0);
  const ports: ContainerSnapshot["ports"][number][] = [];
  const seen = new Set<string>();
  for (const [key, bindings] of Object.entries(info.NetworkSettings?.Ports ?? {})) {
    const [port, protocol] = key.split("/");
    for (const b of bindings ?? []) {
      const id = `${key}:${b.HostPort}`;
      if (seen.has(id) || !b.HostPort) continue;
      seen.add(id);
      ports.push({
        containerPort: Number(port),
        protocol: protocol === "udp" ? "udp" : "tcp",
        hostIp: b.HostIp,
        hostPort: Number(b.HostPort),
      });
    }
  }
  const status = health?.Status;
  return {
    id: info.Id,
    name: info.Name.replace(/^\//, ""),
    labels: info.Config?.Labels ?? {},
    status: state.Status,
    running: state.Running,
    restarting: state.Restarting,
    oomKilled: state.OOMKilled,
    exitCode: state.ExitCode,
    error: state.Error ?? "",
    health: status === "starting" || status === "healthy" || status === "unhealthy" ? status : "none",
    healthOutput: (lastFailure?.Output ?? "").trim().slice(0, 500),
    failingStreak: health?.FailingStreak ?? 0,
    ...(time(state.StartedAt) ? { startedAt: time(state.StartedAt)! } : {}),
    ...(time(state.FinishedAt) ? { finishedAt: time(state.FinishedAt)! } : {}),
    restartCount: info.RestartCount ?? 0,
    memoryLimitBytes: info.HostConfig?.Memory ?? 0,
    ports,
  };
}

function exitReason(c: ContainerSnapshot): ObservedReason {
  if (c.oomKilled) {
    const limit = c.memoryLimitBytes > 0 ? ` of ${Math.round(c.memoryLimitBytes / 1_048_576)} MiB` : "";
    return { code: "OOM_KILLED", message: `killed for exceeding its memory limit${limit}`, retryable: true };
  }
  return { code: "CONTAINER_EXITED", message: `exited with code ${c.exitCode}`, retryable: true };
}

/**
 * The replica state a container is in, with a typed reason:
 * running → RUNNING (STARTING while its healthcheck has not passed yet, FAILED/UNHEALTHY when it
 * fails); restarting (by Docker's restart policy) → STARTING with why it exited; exited with a
 * non-zero code → FAILED/CONTAINER_EXITED "exited with code N"; killed by the OOM killer →
 * FAILED/OOM_KILLED; a start error recorded by the daemon → FAILED with `startError` (or the daemon's
 * text as RUNTIME_ERROR); exited 0, created or paused → STOPPED; dead → FAILED/RUNTIME_ERROR.
 * `startError` is the typed failure of the agent's last start attempt; it wins while the container is
 * not running. Pure.
 */
export function observedStateOf(
  c: ContainerSnapshot,
  desired: DesiredState,
  startError?: ObservedReason,
): ObservedState {
  if (c.running && !c.restarting) {
    if (c.status === "paused") return { state: "STOPPED", reason: pausedReason };
    if (c.health === "unhealthy") {
      const output = c.healthOutput ? `: ${c.healthOutput}` : "";
      return {
        state: "FAILED",
        reason: {
          code: "UNHEALTHY",
          message: `healthcheck failed ${c.failingStreak} times in a row${output}`,
          retryable: true,
        },
      };
    }
    if (c.health === "starting") return { state: "STARTING" };
    return { state: "RUNNING" };
  }
  if (c.restarting) {
    const why = exitReason(c);
    return { state: "STARTING", reason: { ...why, message: `${why.message}; Docker restarts it` } };
  }
  if (startError) return { state: "FAILED", reason: startError };
  if (c.status === "dead") {
    return {
      state: "FAILED",
      reason: { code: "RUNTIME_ERROR", message: `container is dead${c.error ? `: ${c.error}` : ""}`, retryable: true },
    };
  }
  if (c.status === "removing") return { state: desired === "deleted" ? "DELETING" : "STOPPING" };
  if (c.status === "exited" && (c.oomKilled || c.exitCode !== 0)) {
    if (desired === "stopped" && !c.oomKilled) return { state: "STOPPED" };
    return { state: "FAILED", reason: exitReason(c) };
  }
  if (c.error && desired === "running") {
    return { state: "FAILED", reason: { code: "RUNTIME_ERROR", message: c.error, retryable: true } };
  }
  if (c.status === "exited" && desired === "running") {
    return { state: "STOPPED", reason: { code: "CONTAINER_EXITED", message: "exited with code 0", retryable: true } };
  }
  return { state: "STOPPED" };
}

const pausedReason: ObservedReason = {
  code: "RUNTIME_ERROR",
  message: "container is paused outside Persys",
  retryable: true,
};
