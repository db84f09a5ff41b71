import type { Resources } from "../model/resources.js";
import type { SchedulerNode, WorkloadKind } from "../model/scheduler-node.js";
import { SeededRandom } from "./seeded-random.js";

/** Label keys the simulator puts on nodes. */
export const simLabels = {
  zone: "topology.persys.io/zone",
  rack: "topology.persys.io/rack",
  size: "node.persys.io/size",
  disk: "node.persys.io/disk",
} as const;

/** A hardware class of simulated nodes. */
export interface CapacityClass {
  readonly name: string;
  readonly capacity: Resources;
  /** Relative share of racks. */
  readonly share: number;
}

/** The default hardware mix. */
export const capacityClasses: readonly CapacityClass[] = [
  { name: "small", capacity: { cpuMillicores: 4000, memoryMiB: 8192, diskGiB: 100 }, share: 30 },
  { name: "medium", capacity: { cpuMillicores: 16000, memoryMiB: 65536, diskGiB: 500 }, share: 40 },
  { name: "large", capacity: { cpuMillicores: 64000, memoryMiB: 262144, diskGiB: 2000 }, share: 25 },
  { name: "highmem", capacity: { cpuMillicores: 32000, memoryMiB: 524288, diskGiB: 1000 }, share: 5 },
];

/** What kind of cluster to build; everything but `nodes` and `seed` has a default. */
export interface ClusterShape {
  readonly nodes: number;
  readonly seed: number;
  /** Default: 3 up to 1,000 nodes, then one more per 1,000 nodes, at most 8. */
  readonly zones?: number;
  /** Nodes per rack (racks are homogeneous hardware). Default 40. */
  readonly nodesPerRack?: number;
  readonly notReadyShare?: number;
  readonly cordonedShare?: number;
  readonly drainingShare?: number;
  /** Share of racks with kvm. Default 0.35. */
  readonly kvmShare?: number;
  /** Share of racks with arm64 CPUs. Default 0.15. */
  readonly armShare?: number;
  /** Share of nodes that report measured usage. Default 0.9. */
  readonly measuredShare?: number;
}

interface Rack {
  readonly zone: string;
  readonly name: string;
  readonly size: CapacityClass;
  readonly arch: string;
  readonly kvm: boolean;
  readonly gpu: boolean;
  readonly ssd: boolean;
  readonly runtimes: readonly WorkloadKind[];
}

/** The zone names of a cluster of `nodes` nodes (also the values of the zone label). */
export function zoneNames(nodes: number, zones?: number): string[] {
  const count = zones ?? Math.min(8, Math.max(3, Math.ceil(nodes / 1000) + 1));
  return Array.from({ length: count }, (_, i) => `zone-${String.fromCharCode(97 + (i % 26))}${i >= 26 ? i : ""}`);
}

function makeRack(rng: SeededRandom, zone: string, index: number, shape: ClusterShape): Rack {
  const size = rng.weighted(capacityClasses.map((c) => [c, c.share] as const));
  const arch = rng.chance(shape.armShare ?? 0.15) ? "arm64" : "amd64";
  const kvm = rng.chance(shape.kvmShare ?? 0.35);
  const runtimes: WorkloadKind[] = ["container"];
  if (rng.chance(0.85)) runtimes.push("compose");
  if (kvm || rng.chance(0.1)) runtimes.push("vm");
  return {
    zone,
    name: `${zone}-r${index}`,
    size,
    arch,
    kvm,
    gpu: size.name === "large" && rng.chance(0.1),
    ssd: rng.chance(0.6),
    runtimes,
  };
}

function allocatableOf(c: Resources): Resources {
  return {
    cpuMillicores: c.cpuMillicores - 250,
    memoryMiB: c.memoryMiB - 1024,
    diskGiB: c.diskGiB - 10,
  };
}

/**
 * Builds a heterogeneous cluster as plain node records: zones of racks, each rack homogeneous
 * (one capacity class, arch, kvm or not, disk type, runtimes), a few nodes not ready, cordoned or
 * draining, most reporting measured usage, some holding a host port. Same shape → same nodes.
 */
export function generateCluster(shape: ClusterShape): SchedulerNode[] {
  const rng = new SeededRandom(shape.seed);
  const zones = zoneNames(shape.nodes, shape.zones);
  const perRack = shape.nodesPerRack ?? 40;
  const racks: Rack[] = [];
  const nodes: SchedulerNode[] = [];
  const width = String(shape.nodes).length;
  for (let i = 0; i < shape.nodes; i++) {
    const rackIndex = Math.floor(i / perRack);
    if (racks.length <= rackIndex) {
      const zone = zones[rackIndex % zones.length]!;
      racks.push(makeRack(rng, zone, Math.floor(rackIndex / zones.length), shape));
    }
    const rack = racks[rackIndex]!;
    const capacity = rack.size.capacity;
    const measured = rng.chance(shape.measuredShare ?? 0.9);
    const capabilities = [...(rack.kvm ? ["kvm"] : []), ...(rack.gpu ? ["gpu"] : [])];
    nodes.push({
      id: `node-${String(i).padStart(width, "0")}`,
      labels: {
        [simLabels.zone]: rack.zone,
        [simLabels.rack]: rack.name,
        [simLabels.size]: rack.size.name,
        [simLabels.disk]: rack.ssd ? "ssd" : "hdd",
      },
      capabilities,
      runtimes: rack.runtimes,
      arch: rack.arch,
      capacity,
      allocatable: allocatableOf(capacity),
      usage: measured
        ? {
            cpuMillicores: Math.floor(capacity.cpuMillicores * rng.next() * 0.5),
            memoryMiB: Math.floor(capacity.memoryMiB * rng.next() * 0.5),
            diskGiB: Math.floor(capacity.diskGiB * rng.next() * 0.3),
          }
        : undefined,
      cordoned: rng.chance(shape.cordonedShare ?? 0.02),
      draining: rng.chance(shape.drainingShare ?? 0.005),
      ready: !rng.chance(shape.notReadyShare ?? 0.02),
      usedHostPorts: rng.chance(0.05) ? [{ port: 9100, protocol: "tcp" }] : [],
    });
  }
  return nodes;
}
