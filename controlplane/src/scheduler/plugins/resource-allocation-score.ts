import type { Cycle, Scorer } from "../framework/plugin.js";

/** How the resource scorer ranks nodes: spread load thin, or fill nodes up before using others. */
export type AllocationStrategy = "least-allocated" | "bin-pack";

/**
 * Scorer over reservations after placing the replica: the mean over cpu and memory (and disk
 * when requested) of the reserved share of allocatable, 1 for a dimension the node has none of.
 * `least-allocated` scores 100 × (1 − mean), favouring empty nodes; `bin-pack` scores 100 × mean,
 * favouring full ones. The plugin is named after its strategy so breakdowns say which one ranked
 * the nodes.
 */
export function resourceAllocation(strategy: AllocationStrategy): Scorer {
  let cpu = 0;
  let memory = 0;
  let disk = 0;
  const binPack = strategy === "bin-pack";
  return {
    name: strategy,
    prepare(cycle: Cycle) {
      ({ cpuMillicores: cpu, memoryMiB: memory, diskGiB: disk } = cycle.request.resources);
      return true;
    },
    score(cycle: Cycle, slots: Int32Array, count: number, out: Float64Array) {
      const { freeCpu, freeMemory, freeDisk, invAllocCpu, invAllocMemory, invAllocDisk } = cycle.snapshot.columns;
      const withDisk = disk > 0;
      const perDim = withDisk ? 1 / 3 : 1 / 2;
      for (let j = 0; j < count; j++) {
        const s = slots[j]!;
        // Reserved share after placing = 1 − (free − request) / allocatable; a dimension with no
        // allocatable has reciprocal 0 and so counts as fully used.
        let used = 2 - (freeCpu[s]! - cpu) * invAllocCpu[s]! - (freeMemory[s]! - memory) * invAllocMemory[s]!;
        if (withDisk) used += 1 - (freeDisk[s]! - disk) * invAllocDisk[s]!;
        let share = used * perDim;
        share = Math.min(1, Math.max(0, share));
        out[j] = Math.floor(100.5 - 100 * (binPack ? 1 - share : share));
      }
    },
  };
}
