/**
 * What a simulated node says about itself, and how that becomes a `RegisterNodeRequest` carrying both
 * the Go compute-agent's fields and the Persys `persys_node` extension.
 */
import { api, type control } from "@persys/schema";

/** The workload kinds a node can serve, as the scheduler names them. */
export type SimWorkloadKind = "container" | "compose" | "vm";

/** Resource amounts in the scheduler's units (the shape of the scheduler's `Resources`). */
export interface SimResources {
  readonly cpuMillicores: number;
  readonly memoryMiB: number;
  readonly diskGiB: number;
}

/**
 * One simulated node. A structural subset of the scheduler's `SchedulerNode`, so the output of the
 * scheduler's `generateCluster` (or `makeNode`) can be passed as is; its scheduling-only fields
 * (`cordoned`, `draining`, `ready`, `usedHostPorts`) are ignored.
 */
export interface SimNodeDescription {
  readonly id: string;
  readonly labels?: Readonly<Record<string, string>>;
  /** Probed features, e.g. `kvm`. Default none. */
  readonly capabilities?: readonly string[];
  /** Runtimes the node serves. Default container and compose, plus vm when `kvm` is a capability. */
  readonly runtimes?: readonly SimWorkloadKind[];
  /** Default `amd64`. */
  readonly arch?: string;
  /** Default `linux`. */
  readonly os?: string;
  readonly capacity: SimResources;
  /** Default: `capacity`. */
  readonly allocatable?: SimResources | undefined;
  /** Measured use of the idle node (system processes); replica use is added on top. Default zero. */
  readonly usage?: SimResources | undefined;
}

/** Version string simulated agents register with. */
export const simAgentVersion = "persys-sim-agent/0.1.0";

const kindEnum: Record<SimWorkloadKind, api.WorkloadKind> = {
  container: api.WorkloadKind.WORKLOAD_KIND_CONTAINER,
  compose: api.WorkloadKind.WORKLOAD_KIND_COMPOSE,
  vm: api.WorkloadKind.WORKLOAD_KIND_VM,
};

/** The runtimes of a description with its defaults applied. */
export function runtimesOf(node: SimNodeDescription): readonly SimWorkloadKind[] {
  if (node.runtimes) return node.runtimes;
  return node.capabilities?.includes("kvm") ? ["container", "compose", "vm"] : ["container", "compose"];
}

/** The scheduler's resources in the public API's message shape. */
export function apiResources(r: SimResources): api.Resources {
  return { cpuMillicores: r.cpuMillicores, memoryMib: r.memoryMiB, diskGib: r.diskGiB };
}

/** The `persys_node` extension: the node's full description. */
export function nodeDescriptionMessage(node: SimNodeDescription): api.NodeDescription {
  return {
    capabilities: [...(node.capabilities ?? [])],
    supportedKinds: runtimesOf(node).map((k) => kindEnum[k]),
    arch: node.arch ?? "amd64",
    os: node.os ?? "linux",
    capacity: apiResources(node.capacity),
    allocatable: apiResources(node.allocatable ?? node.capacity),
    conditions: [
      { type: "RuntimeReady", status: api.ConditionStatus.CONDITION_STATUS_TRUE, reason: "Simulated", message: "" },
    ],
  };
}

/**
 * The registration of a node as the Go compute-agent sends it (capabilities in millicores and MB,
 * a `root` storage pool, supported types by name, labels, version, endpoint, timestamp), plus the
 * `persys_node` extension.
 */
export function registerNodeRequest(
  node: SimNodeDescription,
  grpcEndpoint: string,
  options: { agentVersion?: string; clusterId?: string; now?: Date } = {},
): control.RegisterNodeRequest {
  return {
    nodeId: node.id,
    capabilities: {
      cpuTotalMillicores: node.capacity.cpuMillicores,
      memoryTotalMb: node.capacity.memoryMiB,
      storagePools: [{ name: "root", type: "dir", totalGb: node.capacity.diskGiB }],
      supportedWorkloadTypes: [...runtimesOf(node)],
      supportedStorageDrivers: ["local"],
    },
    labels: { ...(node.labels ?? {}) },
    agentVersion: options.agentVersion ?? simAgentVersion,
    grpcEndpoint,
    clusterId: options.clusterId ?? "",
    timestamp: options.now ?? new Date(),
    persysNode: nodeDescriptionMessage(node),
  };
}
