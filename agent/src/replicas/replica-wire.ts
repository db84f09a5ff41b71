import { agent, api, control, type ErrorCode } from "@persys/schema";
import type { ContainerSnapshot, ObservedReason, ReplicaStateName } from "../runtimes/docker/container-state.js";
import type { DesiredReplica } from "./desired-replica.js";

/** What the VM driver last saw of a VM replica's domain. */
export interface ObservedVm {
  /** libvirt domain name and UUID. */
  readonly domain: string;
  readonly uuid: string;
  /** Where the serial console is written (served by the logs API). */
  readonly consoleLog: string;
  /** One per NIC, in spec order: MAC as defined, IPv4/IPv6 addresses as the DHCP leases say. */
  readonly interfaces: readonly { readonly network: string; readonly mac: string; readonly ips: readonly string[] }[];
  /** The accelerator the domain runs under. */
  readonly accel: "kvm" | "tcg";
}

/** What the agent last saw of a replica (in memory; rebuilt from the runtime after a restart). */
export interface ObservedReplica {
  state: ReplicaStateName;
  reason?: ObservedReason & { readonly nextRetryAt?: Date };
  containerId?: string;
  /** Revision of the runtime object (or of the one being created). */
  observedRevision: string;
  /** Runtime restarts at the current container (Docker's count plus the agent's own). */
  restartCount: number;
  startedAt?: Date;
  lastTransitionAt: Date;
  ports: ContainerSnapshot["ports"];
  /** VM replicas only. */
  vm?: ObservedVm;
  /** Compose replicas only: per-service status and the git commit deployed. */
  compose?: { services: api.ComposeServiceStatus[]; sourceCommit: string };
  cpuMillicores: number;
  memoryBytes: number;
  usageAt?: Date;
  readonly createdAt: Date;
}

/** The identity fields of a replica the wire forms need. */
export type ReplicaIdentity = Pick<
  DesiredReplica,
  "id" | "workloadId" | "index" | "generation" | "revision" | "desired"
> &
  Partial<Pick<DesiredReplica, "kind">>;

const agentTypes: Record<DesiredReplica["kind"], agent.WorkloadType> = {
  container: agent.WorkloadType.WORKLOAD_TYPE_CONTAINER,
  vm: agent.WorkloadType.WORKLOAD_TYPE_VM,
  compose: agent.WorkloadType.WORKLOAD_TYPE_COMPOSE,
};

const usageSources: Record<DesiredReplica["kind"], string> = { container: "docker", vm: "libvirt", compose: "docker" };

const replicaStates: Record<ReplicaStateName, api.ReplicaState> = {
  STARTING: api.ReplicaState.REPLICA_STATE_STARTING,
  RUNNING: api.ReplicaState.REPLICA_STATE_RUNNING,
  STOPPING: api.ReplicaState.REPLICA_STATE_STOPPING,
  STOPPED: api.ReplicaState.REPLICA_STATE_STOPPED,
  FAILED: api.ReplicaState.REPLICA_STATE_FAILED,
  DELETING: api.ReplicaState.REPLICA_STATE_DELETING,
};

/** The Go agent's state strings. */
const goStates: Record<ReplicaStateName, string> = {
  STARTING: "Pending",
  RUNNING: "Running",
  STOPPING: "Pending",
  STOPPED: "Stopped",
  FAILED: "Failed",
  DELETING: "Deleting",
};

const actualStates: Record<ReplicaStateName, agent.ActualState> = {
  STARTING: agent.ActualState.ACTUAL_STATE_PENDING,
  RUNNING: agent.ActualState.ACTUAL_STATE_RUNNING,
  STOPPING: agent.ActualState.ACTUAL_STATE_PENDING,
  STOPPED: agent.ActualState.ACTUAL_STATE_STOPPED,
  FAILED: agent.ActualState.ACTUAL_STATE_FAILED,
  DELETING: agent.ActualState.ACTUAL_STATE_PENDING,
};

const goFailures: Partial<Record<ErrorCode, control.FailureReason>> = {
  IMAGE_PULL_FAILED: control.FailureReason.IMAGE_PULL_FAILED,
  IMAGE_NOT_FOUND: control.FailureReason.IMAGE_NOT_FOUND,
  INVALID_SPEC: control.FailureReason.INVALID_SPEC,
  NETWORK_ERROR: control.FailureReason.NETWORK_ERROR,
  STORAGE_ERROR: control.FailureReason.STORAGE_ERROR,
  VM_BOOT_FAILED: control.FailureReason.VM_BOOT_FAILED,
};

/** Where a replica can be reached: its published ports on this node, a VM's addresses. */
export function endpointsOf(o: ObservedReplica, nodeAddress: string): api.Endpoint[] {
  if (o.state !== "RUNNING" && o.state !== "STARTING") return [];
  const vm = (o.vm?.interfaces ?? []).flatMap((i) =>
    i.ips.map((ip) => ({
      kind: api.EndpointKind.ENDPOINT_KIND_VM_ADDRESS,
      address: ip,
      port: 0,
      targetPort: 0,
      protocol: api.Protocol.PROTOCOL_UNSPECIFIED,
      network: i.network,
    })),
  );
  return [
    ...vm,
    ...o.ports.map((p) => ({
      kind: api.EndpointKind.ENDPOINT_KIND_PUBLISHED_PORT,
      address: p.hostIp && p.hostIp !== "0.0.0.0" && p.hostIp !== "::" ? p.hostIp : nodeAddress,
      port: p.hostPort,
      targetPort: p.containerPort,
      protocol: p.protocol === "udp" ? api.Protocol.PROTOCOL_UDP : api.Protocol.PROTOCOL_TCP,
      network: "",
    })),
  ];
}

function apiReason(o: ObservedReplica): api.Reason | undefined {
  const r = o.reason;
  if (!r) return undefined;
  return {
    code: api.ErrorCode[r.code],
    message: r.message,
    retryable: r.retryable,
    ...(r.nextRetryAt ? { nextRetryAt: r.nextRetryAt } : {}),
    attempts: 0,
    since: o.lastTransitionAt,
  };
}

/** The Persys report of a replica (heartbeat `persys_replicas`, agent `WorkloadStatus.persys`). */
export function replicaReport(d: ReplicaIdentity, o: ObservedReplica, nodeAddress: string): api.ReplicaReport {
  return {
    workloadId: d.workloadId,
    replicaIndex: d.index,
    state: replicaStates[o.state],
    reason: apiReason(o),
    endpoints: endpointsOf(o, nodeAddress),
    observedRevision: o.observedRevision,
    assignmentGeneration: d.generation,
    restartCount: o.restartCount,
    startedAt: o.startedAt,
    lastTransitionAt: o.lastTransitionAt,
    cpuMillicoresUsed: o.state === "RUNNING" ? o.cpuMillicores : 0,
    memoryBytesUsed: o.state === "RUNNING" ? o.memoryBytes : 0,
    runtimeId: o.containerId ?? o.vm?.uuid ?? "",
    services: o.compose?.services ?? [],
    sourceCommit: o.compose?.sourceCommit ?? "",
  };
}

function message(o: ObservedReplica): string {
  if (o.reason) return o.reason.message;
  return {
    STARTING: "starting",
    RUNNING: "running",
    STOPPING: "stopping",
    STOPPED: "stopped",
    FAILED: "failed",
    DELETING: "deleting",
  }[o.state];
}

/** The Go heartbeat status of a replica, keyed by its request id (what a Go scheduler applied). */
export function goWorkloadStatus(d: ReplicaIdentity, o: ObservedReplica): control.WorkloadStatus {
  const failed = o.state === "FAILED";
  return {
    workloadId: d.id,
    state: goStates[o.state],
    failureReason: failed
      ? ((o.reason && goFailures[o.reason.code]) ?? control.FailureReason.RUNTIME_ERROR)
      : control.FailureReason.FAILURE_REASON_UNSPECIFIED,
    message: message(o),
    lastTransition: o.lastTransitionAt,
    reason: o.reason
      ? {
          code: o.reason.code,
          message: o.reason.message,
          lastTransition: o.lastTransitionAt,
          nextRetryAt: o.reason.nextRetryAt,
          retryable: o.reason.retryable,
        }
      : undefined,
    usage: o.state === "RUNNING" ? goUsage(d, o) : undefined,
  };
}

/** The Go usage snapshot of a running replica (cpu_percent of one core, as the Go agent meant it). */
export function goUsage(d: ReplicaIdentity, o: ObservedReplica): control.WorkloadUsageSnapshot {
  return {
    workloadId: d.id,
    type: d.kind ?? "container",
    cpuPercent: o.cpuMillicores / 10,
    memoryBytes: o.memoryBytes,
    diskReadBytes: 0,
    diskWriteBytes: 0,
    netRxBytes: 0,
    netTxBytes: 0,
    collectedAt: o.usageAt,
    source: usageSources[d.kind ?? "container"],
  };
}

const seconds = (d: Date | undefined): number => (d ? Math.floor(d.getTime() / 1000) : 0);

/** The agent `WorkloadStatus` of a replica (ApplyWorkload, GetWorkloadStatus, ListWorkloads). */
export function agentWorkloadStatus(d: ReplicaIdentity, o: ObservedReplica, nodeAddress: string): agent.WorkloadStatus {
  const metadata: Record<string, string> = {
    "persys.workload": d.workloadId,
    "persys.replica": String(d.index),
    "persys.generation": String(d.generation),
    restart_count: String(o.restartCount),
  };
  if (o.containerId) metadata["container.id"] = o.containerId;
  if (o.vm) {
    metadata["vm.domain"] = o.vm.domain;
    metadata["vm.uuid"] = o.vm.uuid;
    metadata["vm.accel"] = o.vm.accel;
    o.vm.interfaces.forEach((i, n) => {
      metadata[`vm.nic${n}.mac`] = i.mac;
      if (i.ips.length > 0) metadata[`vm.nic${n}.ips`] = i.ips.join(",");
    });
  }
  const type = agentTypes[d.kind ?? "container"];
  if (o.reason) {
    metadata.failure_reason = o.reason.code;
    metadata.failure_message = o.reason.message;
    metadata.retryable = String(o.reason.retryable);
    if (o.reason.nextRetryAt) metadata.retry_next_at = o.reason.nextRetryAt.toISOString();
    if (!o.reason.retryable && o.state === "FAILED") metadata.retry_terminal = "true";
  }
  return {
    id: d.id,
    type,
    revisionId: d.revision,
    desiredState:
      d.desired === "stopped" ? agent.DesiredState.DESIRED_STATE_STOPPED : agent.DesiredState.DESIRED_STATE_RUNNING,
    actualState: actualStates[o.state],
    message: message(o),
    createdAt: seconds(o.createdAt),
    updatedAt: seconds(o.lastTransitionAt),
    metadata,
    usage:
      o.state === "RUNNING"
        ? {
            workloadId: d.id,
            type,
            cpuPercent: o.cpuMillicores / 10,
            memoryBytes: o.memoryBytes,
            diskReadBytes: 0,
            diskWriteBytes: 0,
            netRxBytes: 0,
            netTxBytes: 0,
            collectedAt: seconds(o.usageAt),
            source: usageSources[d.kind ?? "container"],
          }
        : undefined,
    persys: replicaReport(d, o, nodeAddress),
  };
}
