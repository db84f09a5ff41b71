/**
 * Reads an agent `ApplyWorkloadRequest` into what a simulated runtime needs: the replica's identity,
 * revision, generation, desired state, reservation, published ports and restart rule. The Persys
 * extension (`persys`, a `ReplicaAssignment`) wins when present; otherwise the Go fields are read the
 * way the Go compute-agent reads them (replica index 0, generation 0).
 */
import { agent, api } from "@persys/schema";
import type { SimResources, SimWorkloadKind } from "./node-description.js";

/** A published host port. */
export interface SimPort {
  readonly hostPort: number;
  readonly containerPort: number;
  readonly protocol: "tcp" | "udp";
}

/** When a crashed replica comes back, in Docker's words. */
export interface RestartRule {
  readonly policy: "no" | "always" | "on-failure" | "unless-stopped";
  /** `on-failure` only: restarts before the replica stays FAILED. 0: no limit. */
  readonly maxRetries: number;
}

/** One replica assignment as the simulated runtime reads it. */
export interface ParsedAssignment {
  /** The `id` the caller used; Go status and `DeleteWorkload`/`GetWorkloadStatus` use it. */
  readonly agentId: string;
  readonly workloadId: string;
  readonly index: number;
  /** Fencing token; 0 when the caller sent no Persys extension. */
  readonly generation: number;
  readonly revision: string;
  readonly desired: "running" | "stopped";
  readonly kind: SimWorkloadKind;
  readonly resources: SimResources;
  readonly ports: readonly SimPort[];
  readonly restart: RestartRule;
  /** Container image, or empty. */
  readonly image: string;
  /** Whether the request carried a spec (Go `spec` or the extension); false: a desired-state change only. */
  readonly hasSpec: boolean;
  /** Whether the request carried the Persys extension. */
  readonly extension: boolean;
}

/** Internal key of a replica on a node. */
export function replicaKey(workloadId: string, index: number): string {
  return `${workloadId}/${index}`;
}

const zero: SimResources = { cpuMillicores: 0, memoryMiB: 0, diskGiB: 0 };

const agentKinds: Record<number, SimWorkloadKind> = {
  [agent.WorkloadType.WORKLOAD_TYPE_CONTAINER]: "container",
  [agent.WorkloadType.WORKLOAD_TYPE_COMPOSE]: "compose",
  [agent.WorkloadType.WORKLOAD_TYPE_VM]: "vm",
};

const apiKinds: Record<number, SimWorkloadKind> = {
  [api.WorkloadKind.WORKLOAD_KIND_CONTAINER]: "container",
  [api.WorkloadKind.WORKLOAD_KIND_COMPOSE]: "compose",
  [api.WorkloadKind.WORKLOAD_KIND_VM]: "vm",
};

/** The agent enum of a kind. */
export function agentWorkloadType(kind: SimWorkloadKind): agent.WorkloadType {
  return kind === "vm"
    ? agent.WorkloadType.WORKLOAD_TYPE_VM
    : kind === "compose"
      ? agent.WorkloadType.WORKLOAD_TYPE_COMPOSE
      : agent.WorkloadType.WORKLOAD_TYPE_CONTAINER;
}

function apiRestart(policy: api.RestartPolicy | undefined): RestartRule {
  switch (policy?.mode) {
    case api.RestartPolicyMode.RESTART_POLICY_MODE_NO:
      return { policy: "no", maxRetries: 0 };
    case api.RestartPolicyMode.RESTART_POLICY_MODE_ALWAYS:
      return { policy: "always", maxRetries: 0 };
    case api.RestartPolicyMode.RESTART_POLICY_MODE_UNLESS_STOPPED:
      return { policy: "unless-stopped", maxRetries: 0 };
    default:
      return { policy: "on-failure", maxRetries: policy?.maxRetries ?? 0 };
  }
}

function goRestart(policy: agent.RestartPolicy | undefined): RestartRule {
  const name = (policy?.policy ?? "").toLowerCase();
  if (name === "always" || name === "unless-stopped") return { policy: name, maxRetries: 0 };
  if (name === "on-failure") return { policy: "on-failure", maxRetries: policy?.maxRetryCount ?? 0 };
  return { policy: "no", maxRetries: 0 }; // the Go agent's default
}

function fromExtension(req: agent.ApplyWorkloadRequest, a: api.ReplicaAssignment): ParsedAssignment {
  const w = a.workload;
  const spec = w?.spec;
  const kind =
    apiKinds[w?.kind ?? 0] ?? (spec?.$case as SimWorkloadKind | undefined) ?? agentKinds[req.type] ?? "container";
  const container = spec?.$case === "container" ? spec.value : undefined;
  const r = w?.resources;
  const requestStopped = req.desiredState === agent.DesiredState.DESIRED_STATE_STOPPED;
  const requestRunning = req.desiredState === agent.DesiredState.DESIRED_STATE_RUNNING;
  const workloadStopped = w?.desiredState === api.DesiredState.DESIRED_STATE_STOPPED;
  return {
    agentId: req.id || `${w?.id ?? ""}-${a.replicaIndex}`,
    workloadId: w?.id || req.id,
    index: a.replicaIndex,
    generation: a.generation,
    revision: a.revision || req.revisionId,
    desired: requestStopped || (!requestRunning && workloadStopped) ? "stopped" : "running",
    kind,
    resources: r ? { cpuMillicores: r.cpuMillicores, memoryMiB: r.memoryMib, diskGiB: r.diskGib } : zero,
    ports: (container?.ports ?? [])
      .filter((p) => p.hostPort > 0)
      .map((p) => ({
        hostPort: p.hostPort,
        containerPort: p.containerPort,
        protocol: p.protocol === api.Protocol.PROTOCOL_UDP ? "udp" : "tcp",
      })),
    restart: kind === "container" ? apiRestart(container?.restartPolicy) : { policy: "on-failure", maxRetries: 0 },
    image: container?.image ?? "",
    hasSpec: w !== undefined,
    extension: true,
  };
}

function fromGo(req: agent.ApplyWorkloadRequest): ParsedAssignment {
  const spec = req.spec?.spec;
  const kind = agentKinds[req.type] ?? (spec?.$case as SimWorkloadKind | undefined) ?? "container";
  const container = spec?.$case === "container" ? spec.value : undefined;
  const vm = spec?.$case === "vm" ? spec.value : undefined;
  const resources: SimResources = container
    ? {
        // The Go scheduler sends cpu_shares = cores × 1000, i.e. millicores.
        cpuMillicores: container.resources?.cpuShares ?? 0,
        memoryMiB: Math.ceil((container.resources?.memoryBytes ?? 0) / 1048576),
        diskGiB: 0,
      }
    : vm
      ? {
          cpuMillicores: vm.vcpus * 1000,
          memoryMiB: vm.memoryMb,
          diskGiB: vm.disks.reduce((s, d) => s + d.sizeGb, 0),
        }
      : zero;
  return {
    agentId: req.id,
    workloadId: req.id,
    index: 0,
    generation: 0,
    revision: req.revisionId,
    desired: req.desiredState === agent.DesiredState.DESIRED_STATE_STOPPED ? "stopped" : "running",
    kind,
    resources,
    ports: (container?.ports ?? [])
      .filter((p) => p.hostPort > 0)
      .map((p) => ({
        hostPort: p.hostPort,
        containerPort: p.containerPort,
        protocol: p.protocol.toLowerCase() === "udp" ? "udp" : "tcp",
      })),
    restart: goRestart(container?.restartPolicy),
    image: container?.image ?? "",
    hasSpec: spec !== undefined,
    extension: false,
  };
}

/**
 * Reads a request, or returns the reason it is invalid (the Go agent answers an invalid request with
 * `applied=false, message="invalid request: …"`, never with a gRPC error).
 */
export function parseAssignment(req: agent.ApplyWorkloadRequest): ParsedAssignment | { invalid: string } {
  if (req.persys) {
    const parsed = fromExtension(req, req.persys);
    if (!parsed.workloadId) return { invalid: "invalid request: persys.workload.id or id is required" };
    if (parsed.index < 0) return { invalid: "invalid request: persys.replica_index must not be negative" };
    return parsed;
  }
  if (!req.id) return { invalid: "invalid request: id is required" };
  return fromGo(req);
}
