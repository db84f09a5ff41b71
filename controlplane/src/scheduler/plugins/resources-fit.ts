import type { Cycle, FilterDetail, NodeFilter, RejectSink, ResourceExhaustion } from "../framework/plugin.js";
import { Reason } from "../framework/reasons.js";
import { amountOf, dimensions, dimensionUnit } from "../model/resources.js";

/**
 * Filter: the node's free resources (allocatable minus reservations) cover the request on every
 * dimension. Each short dimension is its own reason, so a node short of cpu and memory counts
 * under both; the per-dimension shortage (how many nodes, the most any of them has free) goes to
 * the diagnosis' `exhaustion`.
 *
 * A dimension the request does not ask for (0) never fails, even on an over-committed node.
 * `run` does not visit nodes: the snapshot keeps, per dimension, free amounts sorted (counts, most
 * free) and a bitset of the nodes with at least the requested amount free.
 */
export class ResourcesFit implements NodeFilter {
  readonly scope = "node";
  readonly name = "resources-fit";
  readonly reasons = [Reason.INSUFFICIENT_CPU, Reason.INSUFFICIENT_MEMORY, Reason.INSUFFICIENT_DISK] as const;
  private readonly need = new Float64Array(3);
  private readonly short = new Float64Array(3);
  private readonly best = new Float64Array(3);
  private readonly shortages: ResourceExhaustion[] = [];
  private readonly entries = dimensions.map((dimension) => ({
    dimension,
    needed: 0,
    bestAvailable: 0,
    unit: dimensionUnit[dimension],
    nodesShort: 0,
  }));

  prepare(cycle: Cycle): boolean {
    const r = cycle.request.resources;
    this.need[0] = r.cpuMillicores;
    this.need[1] = r.memoryMiB;
    this.need[2] = r.diskGiB;
    this.short.fill(0);
    this.best.fill(0);
    return r.cpuMillicores > 0 || r.memoryMiB > 0 || r.diskGiB > 0;
  }

  run(cycle: Cycle, sink: RejectSink): void {
    const n = cycle.snapshot.nodeCount;
    const free = cycle.snapshot.free;
    for (let d = 0; d < 3; d++) {
      const need = this.need[d]!;
      if (need <= 0) continue;
      const index = d === 0 ? free.cpu : d === 1 ? free.memory : free.disk;
      const short = index.countBelow(need);
      this.short[d] = short;
      this.best[d] = index.bestBelow(need) ?? 0;
      if (short > 0) sink.rejectAllBut(index.atLeast(need, n).bits, d, short);
    }
  }

  check(cycle: Cycle, slot: number): number {
    const cols = cycle.snapshot.columns;
    const [c, m, d] = [this.need[0]!, this.need[1]!, this.need[2]!];
    return (
      (c > 0 && cols.freeCpu[slot]! < c ? 1 : 0) |
      (m > 0 && cols.freeMemory[slot]! < m ? 2 : 0) |
      (d > 0 && cols.freeDisk[slot]! < d ? 4 : 0)
    );
  }

  detail(cycle: Cycle, slot: number, reason: number): FilterDetail {
    const cols = cycle.snapshot.columns;
    const node = cycle.snapshot.entryAt(slot).node;
    const dimension = dimensions[reason]!;
    const free = [cols.freeCpu[slot]!, cols.freeMemory[slot]!, cols.freeDisk[slot]!][reason]!;
    return {
      requested: this.need[reason]!,
      free,
      allocatable: amountOf(node.allocatable, dimension),
      capacity: amountOf(node.capacity, dimension),
      unit: dimensionUnit[dimension],
    };
  }

  /** The shortage per dimension; the array and its entries are reused by the next cycle. */
  exhaustion(): ResourceExhaustion[] {
    const out = this.shortages;
    out.length = 0;
    for (let d = 0; d < 3; d++) {
      if (this.short[d] === 0) continue;
      const x = this.entries[d]!;
      x.needed = this.need[d]!;
      x.bestAvailable = Math.max(0, this.best[d]!);
      x.nodesShort = this.short[d]!;
      out.push(x);
    }
    return out;
  }
}

/** The resources-fit filter. */
export function resourcesFit(): ResourcesFit {
  return new ResourcesFit();
}
