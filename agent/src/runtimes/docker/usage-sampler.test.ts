import { describe, expect, it } from "vitest";
import { cpuMillicoresBetween } from "./usage-sampler.js";

describe("cpuMillicoresBetween", () => {
  it.each([
    { name: "half a core over one second", prev: [0, 0], cur: [500_000_000, 1000], want: 500 },
    { name: "two cores", prev: [1e9, 1000], cur: [5e9, 3000], want: 2000 },
    { name: "no time passed", prev: [0, 1000], cur: [1e9, 1000], want: 0 },
    { name: "counter went back (container restarted)", prev: [5e9, 0], cur: [1e9, 1000], want: 0 },
  ])("$name", ({ prev, cur, want }) => {
    const sample = ([cpuNanos, at]: number[]) => ({ cpuNanos: cpuNanos!, at: at!, memoryBytes: 0 });
    expect(cpuMillicoresBetween(sample(prev), sample(cur))).toBe(want);
  });
});
