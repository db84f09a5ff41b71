import { arch as osArch, platform } from "node:os";
import { api, type control } from "@persys/schema";
import type { HostUsage, NodeResources } from "../host/host-resources.js";

/** The agent version sent at registration. */
export const AGENT_VERSION = "persys-agent/0.1.0";

/** What the node says about itself. */
export interface NodeIdentity {
  readonly nodeId: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly clusterId: string;
  /** host:port of this agent's AgentService. */
  readonly endpoint: string;
  readonly capacity: NodeResources;
  readonly allocatable: NodeResources;
}

const apiKinds = {
  container: api.WorkloadKind.WORKLOAD_KIND_CONTAINER,
  compose: api.WorkloadKind.WORKLOAD_KIND_COMPOSE,
  vm: api.WorkloadKind.WORKLOAD_KIND_VM,
} as const;

const archNames: Record<string, string> = { x64: "amd64", arm64: "arm64", arm: "arm", ia32: "386" };

/** The node's architecture as Go names it (`amd64`, `arm64`). */
export function nodeArch(): string {
  return archNames[osArch()] ?? osArch();
}

/** Labels sent at registration: `os` and `arch` (as the Go agent does), then the configured ones. */
export function registrationLabels(configured: Readonly<Record<string, string>>): Record<string, string> {
  return { os: platform(), arch: nodeArch(), ...configured };
}

/**
 * RegisterNode: the Go compute-agent's fields (capabilities in millicores and MB, a `root` storage
 * pool, supported types by name, labels, version, endpoint, timestamp) and the Persys `persys_node`
 * description (capabilities, kinds, arch, os, capacity, allocatable, conditions).
 */
export function registerNodeRequest(
  node: NodeIdentity,
  input: {
    capabilities: readonly string[];
    /** Workload kinds with a runtime on this node. Default: container. */
    kinds?: readonly ("container" | "compose" | "vm")[];
    conditions: readonly api.Condition[];
    now: Date;
  },
): control.RegisterNodeRequest {
  const labels = registrationLabels(node.labels);
  const kinds = input.kinds ?? ["container"];
  return {
    nodeId: node.nodeId,
    capabilities: {
      cpuTotalMillicores: node.capacity.cpuMillicores,
      memoryTotalMb: node.capacity.memoryMib,
      storagePools: [{ name: "root", type: "dir", totalGb: node.capacity.diskGib }],
      supportedWorkloadTypes: [...kinds],
      supportedStorageDrivers: ["local"],
    },
    labels,
    agentVersion: AGENT_VERSION,
    grpcEndpoint: node.endpoint,
    clusterId: node.clusterId,
    timestamp: input.now,
    persysNode: {
      capabilities: [...input.capabilities],
      supportedKinds: kinds.map((k) => apiKinds[k]),
      arch: labels.arch ?? nodeArch(),
      os: labels.os ?? platform(),
      capacity: node.capacity,
      allocatable: node.allocatable,
      conditions: [...input.conditions],
    },
  };
}

/**
 * A heartbeat: Go usage (allocated = reservations of the replicas that hold them, used = measured)
 * and `workload_statuses`/`workload_usage`, plus the Persys `persys_node` (conditions, measured use)
 * and `persys_replicas` reports.
 */
export function heartbeatRequest(
  nodeId: string,
  input: {
    allocated: NodeResources;
    used: HostUsage;
    conditions: readonly api.Condition[];
    statuses: control.WorkloadStatus[];
    usage: control.WorkloadUsageSnapshot[];
    reports: api.ReplicaReport[];
    now: Date;
  },
): control.HeartbeatRequest {
  return {
    nodeId,
    usage: {
      cpuAllocatedMillicores: input.allocated.cpuMillicores,
      cpuUsedMillicores: input.used.cpuMillicores,
      memoryAllocatedMb: input.allocated.memoryMib,
      memoryUsedMb: input.used.memoryMib,
      diskAllocatedGb: input.allocated.diskGib,
      diskUsedGb: input.used.diskGib,
    },
    workloadStatuses: input.statuses,
    timestamp: input.now,
    workloadUsage: input.usage,
    persysNode: {
      conditions: [...input.conditions],
      usage: { cpuMillicores: input.used.cpuMillicores, memoryMib: input.used.memoryMib, diskGib: input.used.diskGib },
    },
    persysReplicas: input.reports,
  };
}
