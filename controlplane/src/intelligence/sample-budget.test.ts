import { describe, expect, it } from "vitest";
import { budgetedResolutionMs } from "./sample-budget.js";

describe("budgetedResolutionMs", () => {
  it("keeps the base resolution while the series fit the budget", () => {
    expect(budgetedResolutionMs(10_000, 0, 1_000)).toBe(10_000);
    expect(budgetedResolutionMs(10_000, 10_000, 1_000)).toBe(10_000);
    expect(budgetedResolutionMs(10_000, 1e9, Number.POSITIVE_INFINITY)).toBe(10_000);
  });

  it("coarsens to the smallest multiple of the base that fits", () => {
    expect(budgetedResolutionMs(10_000, 10_001, 1_000)).toBe(20_000);
    // 5,000 nodes, 20,000 replicas: 55,000 usage series at 1,000 points a second.
    const resolution = budgetedResolutionMs(10_000, 55_000, 1_000);
    expect(resolution).toBe(60_000);
    expect((55_000 * 1000) / resolution).toBeLessThanOrEqual(1_000);
  });
});
