import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { collectFrom, popcount, popcount32, setBit, wordsFor } from "./node-bitset.js";

describe("node bitsets", () => {
  it.each([
    { name: "zero", x: 0, want: 0 },
    { name: "one bit", x: 1 << 7, want: 1 },
    { name: "top bit", x: 0x80000000, want: 1 },
    { name: "all bits", x: 0xffffffff, want: 32 },
    { name: "alternating", x: 0x55555555, want: 16 },
  ])("popcount32 of $name", ({ x, want }) => {
    expect(popcount32(x)).toBe(want);
  });

  it("collects set slots cyclically from a start slot, up to a maximum", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }).chain((n) =>
          fc.record({
            n: fc.constant(n),
            set: fc.uniqueArray(fc.integer({ min: 0, max: n - 1 })),
            start: fc.integer({ min: 0, max: n - 1 }),
            max: fc.integer({ min: 0, max: n + 5 }),
          }),
        ),
        ({ n, set, start, max }) => {
          const bits = new Uint32Array(wordsFor(n));
          for (const s of set) setBit(bits, s);
          const out = new Int32Array(n);
          const k = collectFrom(bits, n, start, max, out);
          const sorted = [...set].sort((a, b) => a - b);
          const expected = [...sorted.filter((s) => s >= start), ...sorted.filter((s) => s < start)].slice(0, max);
          expect([...out.subarray(0, k)]).toEqual(expected);
          expect(popcount(bits, wordsFor(n))).toBe(set.length);
        },
      ),
    );
  });
});
