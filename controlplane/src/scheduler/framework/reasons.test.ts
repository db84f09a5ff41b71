import { describe, expect, it } from "vitest";
import { Reason, reasonCatalog, reasonsFixedBy } from "./reasons.js";

describe("reasons", () => {
  it("catalogues every reason code", () => {
    expect(Object.keys(reasonCatalog).sort()).toEqual(Object.values(Reason).sort());
  });

  it.each([
    { name: "a new node can fix anything", aspects: ["node-added"] as const, has: Object.values(Reason), lacks: [] },
    {
      name: "freed capacity fixes shortages, not selectors",
      aspects: ["capacity"] as const,
      has: [Reason.INSUFFICIENT_MEMORY, Reason.INSUFFICIENT_CPU],
      lacks: [Reason.NODE_SELECTOR_MISMATCH, Reason.CAPABILITY_MISSING],
    },
    {
      name: "a label change fixes selectors and spread, not shortages",
      aspects: ["labels"] as const,
      has: [Reason.NODE_SELECTOR_MISMATCH, Reason.NODE_AFFINITY_MISMATCH, Reason.SPREAD_LABEL_MISSING],
      lacks: [Reason.INSUFFICIENT_MEMORY],
    },
    { name: "usage reports fix nothing", aspects: [] as const, has: [], lacks: Object.values(Reason) },
  ])("$name", ({ aspects, has, lacks }) => {
    const fixed = reasonsFixedBy(aspects);
    for (const r of has) expect(fixed.has(r)).toBe(true);
    for (const r of lacks) expect(fixed.has(r)).toBe(false);
  });
});
