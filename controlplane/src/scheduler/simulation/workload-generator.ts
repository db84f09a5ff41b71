import type { PlacementRequest, PlacementRules, SpreadConstraint } from "../model/placement-request.js";
import type { Resources } from "../model/resources.js";
import type { HostPort, WorkloadKind } from "../model/scheduler-node.js";
import { simLabels } from "./cluster-generator.js";
import { SeededRandom } from "./seeded-random.js";

/** What workloads to build. Shares are probabilities per workload. */
export interface WorkloadMix {
  readonly count: number;
  readonly seed: number;
  /** Zone names of the cluster (see `zoneNames`), for zone selectors. */
  readonly zones: readonly string[];
  /** Share of workloads made impossible to place (missing capability, huge memory, unknown zone). Default 0.01. */
  readonly unschedulableShare?: number;
}

const tiers = ["web", "api", "cache", "db", "batch"] as const;

function containerResources(rng: SeededRandom): Resources {
  return {
    cpuMillicores: rng.pick([100, 250, 500, 500, 1000, 2000]),
    memoryMiB: rng.pick([128, 256, 512, 1024, 2048, 4096]),
    diskGiB: rng.pick([0, 1, 1, 5, 10]),
  };
}

function resourcesFor(rng: SeededRandom, kind: WorkloadKind): Resources {
  if (kind === "container") return containerResources(rng);
  if (kind === "compose") {
    return {
      cpuMillicores: rng.pick([500, 1000, 2000]),
      memoryMiB: rng.pick([1024, 2048, 4096]),
      diskGiB: rng.pick([5, 10, 20]),
    };
  }
  return {
    cpuMillicores: rng.pick([1000, 2000, 4000, 8000]),
    memoryMiB: rng.pick([2048, 4096, 8192, 16384]),
    diskGiB: rng.pick([20, 40, 80]),
  };
}

function replicasFor(rng: SeededRandom, kind: WorkloadKind): number {
  if (kind === "vm") return rng.chance(0.8) ? 1 : rng.int(2, 3);
  if (kind === "compose") return rng.chance(0.7) ? 1 : rng.int(2, 3);
  return rng.weighted([
    [1, 45],
    [rng.int(2, 3), 35],
    [rng.int(4, 8), 15],
    [rng.int(10, 20), 5],
  ]);
}

function placementFor(
  rng: SeededRandom,
  kind: WorkloadKind,
  replicas: number,
  tier: string,
  zones: readonly string[],
  databases: readonly string[],
): PlacementRules {
  const p: {
    -readonly [K in keyof PlacementRules]: PlacementRules[K];
  } = {};
  if (rng.chance(0.15)) p.nodeSelector = { [simLabels.zone]: rng.pick(zones) };
  else if (rng.chance(0.1)) p.nodeSelector = { [simLabels.disk]: "ssd" };
  if (rng.chance(0.05)) p.requiredAffinity = [{ key: simLabels.size, operator: "In", values: ["large", "highmem"] }];
  if (rng.chance(0.2)) {
    p.preferredAffinity = [{ weight: 50, match: [{ key: simLabels.disk, operator: "In", values: ["ssd"] }] }];
  }
  if (kind === "vm" && rng.chance(0.7)) p.requiredCapabilities = ["kvm"];
  if (kind === "container" && rng.chance(0.15)) p.arch = [rng.chance(0.7) ? "amd64" : "arm64"];
  if (replicas > 1) {
    if (rng.chance(0.2)) p.antiAffinity = { replicas: "required" };
    if (rng.chance(0.2)) {
      const spread: SpreadConstraint = {
        labelKey: simLabels.zone,
        maxSkew: 1,
        whenUnsatisfiable: rng.chance(0.75) ? "do-not-schedule" : "schedule-anyway",
      };
      p.spread = [spread];
    }
  }
  // Batch jobs keep off the node of one database; a few keep off every database.
  if (tier === "batch" && databases.length > 0 && rng.chance(0.25)) {
    const avoid: Record<string, string> = rng.chance(0.05) ? { tier: "db" } : { app: rng.pick(databases) };
    p.antiAffinity = { ...p.antiAffinity, workloads: [{ matchLabels: avoid }] };
  }
  return p;
}

function makeUnschedulable(rng: SeededRandom, request: PlacementRequest): PlacementRequest {
  const way = rng.int(0, 2);
  if (way === 0) {
    return { ...request, placement: { ...request.placement, requiredCapabilities: ["gpu-a100"] } };
  }
  if (way === 1) return { ...request, resources: { ...request.resources, memoryMiB: 2_000_000 } };
  return { ...request, placement: { ...request.placement, nodeSelector: { [simLabels.zone]: "zone-nowhere" } } };
}

/**
 * Builds a workload mix as plain placement requests: mostly containers, some compose stacks and
 * VMs (most needing kvm); replicas from 1 to 20; zone and disk selectors; size affinity; ssd
 * preference; arch pins; zone spread (hard and soft); required replica anti-affinity; batch
 * workloads avoiding a database (a few avoiding all of them); host ports that collide; and a few that can never be placed.
 * Same mix → same workloads.
 */
export function generateWorkloads(mix: WorkloadMix): PlacementRequest[] {
  const rng = new SeededRandom(mix.seed);
  const width = String(mix.count).length;
  const out: PlacementRequest[] = [];
  const databases: string[] = [];
  for (let i = 0; i < mix.count; i++) {
    const kind = rng.weighted<WorkloadKind>([
      ["container", 70],
      ["compose", 20],
      ["vm", 10],
    ]);
    const replicas = replicasFor(rng, kind);
    const tier = rng.pick(tiers);
    const workloadId = `w-${String(i).padStart(width, "0")}`;
    const hostPorts: HostPort[] =
      kind === "container" && rng.chance(0.08)
        ? [{ port: rng.pick([80, 443, 8080, 8443, 9000]), protocol: "tcp" }]
        : [];
    let request: PlacementRequest = {
      workloadId,
      kind,
      replicas,
      resources: resourcesFor(rng, kind),
      labels: { app: workloadId, tier },
      hostPorts,
      placement: placementFor(rng, kind, replicas, tier, mix.zones, databases),
    };
    if (tier === "db") databases.push(workloadId);
    if (rng.chance(mix.unschedulableShare ?? 0.01)) request = makeUnschedulable(rng, request);
    out.push(request);
  }
  return out;
}
