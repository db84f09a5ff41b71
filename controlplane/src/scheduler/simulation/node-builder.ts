import type { PlacementRequest } from "../model/placement-request.js";
import type { Resources } from "../model/resources.js";
import type { SchedulerNode } from "../model/scheduler-node.js";

/** Resources from a compact triple. */
export function resources(cpuMillicores: number, memoryMiB: number, diskGiB = 0): Resources {
  return { cpuMillicores, memoryMiB, diskGiB };
}

/**
 * A ready, schedulable amd64 node serving containers and compose, with 4 cores, 8 GiB and 100 GiB
 * allocatable (and as capacity), unless overridden. For tests, examples and hand-built clusters.
 */
export function makeNode(id: string, overrides: Partial<Omit<SchedulerNode, "id">> = {}): SchedulerNode {
  const allocatable = overrides.allocatable ?? resources(4000, 8192, 100);
  return {
    id,
    labels: {},
    capabilities: [],
    runtimes: ["container", "compose"],
    arch: "amd64",
    capacity: overrides.capacity ?? allocatable,
    allocatable,
    cordoned: false,
    draining: false,
    ready: true,
    ...overrides,
  };
}

/** A one-replica container request for 100m, 128 MiB, unless overridden. */
export function makeRequest(
  workloadId: string,
  overrides: Partial<Omit<PlacementRequest, "workloadId">> = {},
): PlacementRequest {
  return {
    workloadId,
    kind: "container",
    replicas: 1,
    resources: resources(100, 128),
    ...overrides,
  };
}
