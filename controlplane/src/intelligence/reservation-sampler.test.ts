import { describe, expect, it } from "vitest";
import type { ClusterState } from "../cluster/cluster-state.js";
import { ReservationSampler } from "./reservation-sampler.js";

/** A cluster of `count` nodes with nothing placed (all this sampler reads of the state). */
function emptyCluster(count: number): ClusterState {
  const nodes = new Map(Array.from({ length: count }, (_, i) => [`node-${i}`, {}]));
  return { nodes, assignmentsOn: () => [], workloads: new Map() } as unknown as ClusterState;
}

function sampledTimes(nodes: number, pointsPerSecond: number, ticks: number): number[] {
  let now = 0;
  const written: number[] = [];
  const sampler = new ReservationSampler(
    emptyCluster(nodes),
    { addSample: async (_series, at) => void written.push(at) },
    10_000,
    () => now,
    pointsPerSecond,
  );
  for (let tick = 0; tick < ticks; tick++) {
    now = tick * 10_000 + (tick % 3) * 7; // a little timer jitter
    sampler.sample();
  }
  return [...new Set(written)];
}

describe("ReservationSampler", () => {
  it("samples every node on every tick while the series fit the budget", () => {
    expect(sampledTimes(100, 1_000, 6)).toHaveLength(6);
  });

  it("samples every few ticks when the cluster has more series than the budget allows", () => {
    // 5,000 nodes, 15,000 series, 1,000 points a second: every 20 s, i.e. every other tick.
    const times = sampledTimes(5_000, 1_000, 12);
    expect(times).toHaveLength(6);
    expect(times.every((t, i) => i === 0 || t - times[i - 1]! >= 20_000 - 10)).toBe(true);
  });
});
