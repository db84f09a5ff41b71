import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DimensionIndex } from "./free-capacity-index.js";
import { hasBit } from "./node-bitset.js";

type Op = { kind: "add"; free: number } | { kind: "change"; at: number; free: number } | { kind: "remove"; at: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant("add" as const), free: fc.integer({ min: -5, max: 50 }) }),
  fc.record({ kind: fc.constant("change" as const), at: fc.nat(), free: fc.integer({ min: -5, max: 50 }) }),
  fc.record({ kind: fc.constant("remove" as const), at: fc.nat() }),
);

describe("DimensionIndex", () => {
  it("answers like a scan after any sequence of adds, changes and swap-removes", () => {
    fc.assert(
      fc.property(
        fc.array(op, { maxLength: 80 }),
        fc.array(fc.integer({ min: -5, max: 55 }), { maxLength: 6 }),
        (ops, probes) => {
          const free: number[] = [];
          const index = new DimensionIndex((s) => free[s]!);
          index.ensure(200);
          // Ask for some thresholds early, so they are maintained incrementally from then on.
          for (const p of probes.slice(0, 3)) index.atLeast(p, free.length);
          for (const o of ops) {
            if (o.kind === "add") {
              free.push(o.free);
              index.add(free.length - 1, o.free);
            } else if (free.length > 0 && o.kind === "change") {
              const at = o.at % free.length;
              const before = free[at]!;
              free[at] = o.free;
              index.change(at, before, o.free);
            } else if (free.length > 0 && o.kind === "remove") {
              const at = o.at % free.length;
              const last = free.length - 1;
              index.remove(at, free[at]!);
              if (at !== last) {
                free[at] = free[last]!;
                index.move(last, at);
              }
              free.pop();
            }
          }
          for (const p of probes) {
            const below = free.filter((f) => f < p);
            expect(index.countBelow(p)).toBe(below.length);
            expect(index.bestBelow(p)).toBe(below.length === 0 ? undefined : Math.max(...below));
            const t = index.atLeast(p, free.length);
            expect(t.count).toBe(free.length - below.length);
            for (let s = 0; s < 200; s++) expect(hasBit(t.bits, s)).toBe(s < free.length && free[s]! >= p);
          }
        },
      ),
    );
  });
});
