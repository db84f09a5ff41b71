import { describe, expect, it } from "vitest";
import { adaptivePercentage, nodesToScore, sampleStart } from "./sampling.js";

describe("sampling", () => {
  it.each([
    { name: "tiny cluster: everything", total: 12, feasible: 12, want: 12 },
    { name: "at the minimum: everything", total: 100, feasible: 100, want: 100 },
    { name: "1,000 nodes: about 42%", total: 1000, feasible: 1000, want: 418 },
    { name: "5,000 nodes: 5%", total: 5000, feasible: 5000, want: 250 },
    { name: "10,000 nodes: 5%", total: 10000, feasible: 9000, want: 500 },
    { name: "a share smaller than what is feasible", total: 5000, feasible: 150, want: 150 },
    { name: "never more than are feasible", total: 5000, feasible: 90, want: 90 },
  ])("$name", ({ total, feasible, want }) => {
    expect(nodesToScore(total, feasible)).toBe(want);
  });

  it("falls from 50% at 100 nodes to 5% at 5,000", () => {
    expect([100, 2550, 5000, 20000].map(adaptivePercentage)).toEqual([50, 27.5, 5, 5]);
  });

  it("honours a fixed percentage and minimum", () => {
    expect(nodesToScore(1000, 1000, { percentage: 10, minNodes: 20 })).toBe(100);
    expect(nodesToScore(1000, 1000, { percentage: 1, minNodes: 20 })).toBe(20);
  });

  it("rotates the sample start over the cluster across replicas, deterministically", () => {
    const starts = Array.from({ length: 2000 }, (_, r) => sampleStart(7, 12345, r, 100));
    expect(starts).toEqual(Array.from({ length: 2000 }, (_, r) => sampleStart(7, 12345, r, 100)));
    const hits = new Array(10).fill(0);
    for (const s of starts) hits[Math.floor(s / 10)]++;
    for (const h of hits) expect(h).toBeGreaterThan(120);
    expect(sampleStart(8, 12345, 0, 1_000_000)).not.toBe(sampleStart(7, 12345, 0, 1_000_000));
  });
});
