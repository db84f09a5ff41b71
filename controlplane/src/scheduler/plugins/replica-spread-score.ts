import type { Cycle, Scorer } from "../framework/plugin.js";
import { SlotMarks } from "../framework/slot-marks.js";

/** Above this many nodes with siblings, look each scored node up instead of marking them all. */
const markLimit = 128;

/**
 * Scorer for the default spread of replicas across nodes (`antiAffinity.replicas: preferred`,
 * and `required` too): a node already running k replicas of the workload scores 100 / (1 + k).
 * Skipped when the workload has no other placed replica (every node would score 100) or asks for
 * `none`. Costs O(nodes with siblings) up to a limit, then O(scored nodes).
 */
export function replicaSpread(): Scorer {
  const siblings = new SlotMarks();
  let lookup: Cycle["workload"];
  const markSibling = (count: number, entry: { slot: number }): void => {
    siblings.mark(entry.slot, count);
  };
  return {
    name: "replica-spread",
    prepare(cycle: Cycle) {
      const workload = cycle.workload;
      if (cycle.request.replicaAntiAffinity === "none" || workload === undefined) return false;
      lookup = workload.nodeCounts.size > markLimit ? workload : undefined;
      if (lookup === undefined) {
        siblings.reset(cycle.id, cycle.snapshot.columns.capacity);
        workload.nodeCounts.forEach(markSibling);
      }
      return true;
    },
    score(cycle: Cycle, slots: Int32Array, count: number, out: Float64Array) {
      if (lookup === undefined) {
        for (let j = 0; j < count; j++) out[j] = Math.round(100 / (1 + siblings.count(slots[j]!)));
        return;
      }
      const counts = lookup.nodeCounts;
      for (let j = 0; j < count; j++) {
        out[j] = Math.round(100 / (1 + (counts.get(cycle.snapshot.entryAt(slots[j]!)) ?? 0)));
      }
    },
  };
}
