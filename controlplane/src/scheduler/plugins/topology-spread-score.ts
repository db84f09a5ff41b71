import type { Cycle, Scorer } from "../framework/plugin.js";
import { SpreadCounter, type SpreadCounts } from "./spread-counts.js";

/**
 * Scorer for every spread constraint (`do-not-schedule` and `schedule-anyway`): per constraint,
 * 100 for a node in the least loaded eligible domain down to 0 in the most loaded one, linearly
 * (100 everywhere when all are equal; 0 without the label); the mean over constraints. Skipped
 * when the workload has no placed replica yet (every node would score 100). Scores are computed
 * per domain once per cycle, then looked up per node.
 */
export function topologySpreadScore(): Scorer {
  const counter = new SpreadCounter();
  const state: SpreadCounts[] = [];
  const perDomain: Float64Array[] = [];
  return {
    name: "topology-spread",
    prepare(cycle: Cycle) {
      const spread = cycle.request.spread;
      if (spread.length === 0 || cycle.workload === undefined) return false;
      state.length = 0;
      for (let i = 0; i < spread.length; i++) {
        const s = counter.count(cycle, spread[i]!, i);
        state.push(s);
        let table = perDomain[i];
        if (table === undefined || table.length < s.domains) {
          table = new Float64Array(Math.max(s.domains, 8));
          perDomain[i] = table;
        }
        const range = s.max - s.min;
        for (let d = 0; d < s.domains; d++) {
          table[d] = range === 0 ? 100 : (100 * Math.max(0, s.max - s.counts[d]!)) / range;
        }
      }
      return true;
    },
    score(cycle: Cycle, slots: Int32Array, count: number, out: Float64Array) {
      const classOf = cycle.snapshot.columns.classOf;
      const constraints = state.length;
      if (constraints === 1) {
        const domainOf = state[0]!.domainOf;
        const table = perDomain[0]!;
        for (let j = 0; j < count; j++) {
          const d = domainOf[classOf[slots[j]!]!]!;
          out[j] = d < 0 ? 0 : Math.round(table[d]!);
        }
        return;
      }
      for (let j = 0; j < count; j++) {
        const cls = classOf[slots[j]!]!;
        let sum = 0;
        for (let i = 0; i < constraints; i++) {
          const d = state[i]!.domainOf[cls]!;
          if (d >= 0) sum += perDomain[i]![d]!;
        }
        out[j] = Math.round(sum / constraints);
      }
    },
  };
}
