import type { Cycle, Scorer } from "../framework/plugin.js";

/** The score of a node that has not reported usage: neither attractive nor avoided. */
export const unmeasuredScore = 50;

/**
 * Scorer on measured usage (the only place usage counts): 100 × (1 − the higher of measured cpu
 * and memory use as a share of capacity). Steers replicas away from nodes that are busier than
 * their reservations say. A node without a usage report scores {@link unmeasuredScore}. The share
 * is computed by the snapshot when usage is reported.
 */
export function measuredUtilisation(): Scorer {
  return {
    name: "measured-utilisation",
    prepare: () => true,
    score(cycle: Cycle, slots: Int32Array, count: number, out: Float64Array) {
      const share = cycle.snapshot.columns.usageShare;
      for (let j = 0; j < count; j++) {
        const u = share[slots[j]!]!;
        out[j] = u < 0 ? unmeasuredScore : Math.floor(100.5 - 100 * u);
      }
    },
  };
}
