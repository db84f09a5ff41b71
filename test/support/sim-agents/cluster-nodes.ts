/**
 * Node descriptions for simulated fleets, built with the scheduler's seeded cluster generator
 * (`controlplane/src/scheduler/simulation`), whose `SchedulerNode` records already have the shape a
 * `SimNodeDescription` needs: the mapping keeps identity, labels, capabilities, runtimes, arch,
 * capacity, allocatable and (optionally) measured idle usage, and drops what is control-plane state
 * (ready, cordoned, draining) or has no heartbeat field (host ports held by other processes).
 */
import type { SchedulerNode } from "../../../controlplane/src/scheduler/model/scheduler-node.js";
import { type ClusterShape, generateCluster } from "../../../controlplane/src/scheduler/simulation/index.js";
import type { SimNodeDescription } from "./node-description.js";

/** A scheduler node as a simulated node's description. */
export function fromSchedulerNode(node: SchedulerNode, options: { idleUsage?: boolean } = {}): SimNodeDescription {
  return {
    id: node.id,
    labels: { ...node.labels },
    capabilities: [...node.capabilities],
    runtimes: [...node.runtimes],
    arch: node.arch,
    os: "linux",
    capacity: { ...node.capacity },
    allocatable: { ...node.allocatable },
    usage: (options.idleUsage ?? true) && node.usage ? { ...node.usage } : undefined,
  };
}

/** Options of `simulatedNodes`: the generator's shape, by count. */
export type SimulatedNodesShape = Omit<ClusterShape, "nodes" | "seed"> & {
  readonly count: number;
  /** Default 1. */
  readonly seed?: number;
  /** Report the generator's measured usage as the idle baseline of each node. Default true. */
  readonly idleUsage?: boolean;
};

/**
 * `count` heterogeneous node descriptions (zones of homogeneous racks: small/medium/large/highmem,
 * amd64/arm64, some with kvm and vm, most with compose), reproducible from `seed`. Every node is
 * meant to run: the generator's not-ready, cordoned and draining shares default to 0 here.
 */
export function simulatedNodes(shape: SimulatedNodesShape): SimNodeDescription[] {
  const { count, seed, idleUsage, ...rest } = shape;
  return generateCluster({
    notReadyShare: 0,
    cordonedShare: 0,
    drainingShare: 0,
    ...rest,
    nodes: count,
    seed: seed ?? 1,
  }).map((n) => fromSchedulerNode(n, { idleUsage }));
}
