import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { crossing, fitHolt, fitLinear, type Point, predict, quantile } from "./trend-fit.js";

const line = (n: number, start: number, stepMs: number, v0: number, slopePerMs: number): Point[] =>
  Array.from({ length: n }, (_, i) => ({ t: start + i * stepMs, v: v0 + slopePerMs * i * stepMs }));

describe("fitLinear", () => {
  it("recovers any exact line and the time it reaches a limit", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 3, max: 200 }),
        fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
        fc.integer({ min: 100, max: 60_000 }),
        fc.double({ min: 0, max: 1000, noNaN: true }),
        fc.double({ min: 1e-6, max: 1, noNaN: true }),
        (n, start, step, v0, slope) => {
          const points = line(n, start, step, v0, slope);
          const fit = fitLinear(points)!;
          expect(fit.slopePerMs).toBeCloseTo(slope, 6);
          expect(fit.rSquared).toBeGreaterThan(0.999_999);
          const last = points[n - 1]!;
          const limit = last.v + 500;
          const at = crossing(fit, limit)!;
          const truth = last.t + 500 / slope;
          expect(Math.abs(at.atMs - truth)).toBeLessThanOrEqual(Math.max(1, (truth - last.t) * 1e-6));
          expect(at.earliestMs).toBeLessThanOrEqual(at.atMs);
          expect(at.latestMs!).toBeGreaterThanOrEqual(at.atMs);
        },
      ),
    );
  });

  it("keeps the true crossing inside the band for a noisy line (seeded noise)", () => {
    let seed = 7;
    const noise = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return (seed / 2 ** 31 - 0.5) * 40; // ±20 units
    };
    const points = line(120, 0, 1000, 100, 0.01).map((p) => ({ t: p.t, v: p.v + noise() }));
    const fit = fitLinear(points)!;
    const at = crossing(fit, 3000)!;
    const truth = (3000 - 100) / 0.01;
    expect(at.earliestMs).toBeLessThanOrEqual(truth);
    expect(at.latestMs!).toBeGreaterThanOrEqual(truth);
    expect(Math.abs(at.atMs - truth) / truth).toBeLessThan(0.05);
  });

  it("says nothing runs out for a flat or falling series, and 'now' when already over the limit", () => {
    expect(crossing(fitLinear(line(10, 0, 1000, 500, 0))!, 1000)).toBeUndefined();
    expect(crossing(fitLinear(line(10, 0, 1000, 500, -0.01))!, 1000)).toBeUndefined();
    const over = fitLinear(line(10, 0, 1000, 1200, 0.001))!;
    expect(crossing(over, 1000)!.atMs).toBe(over.originMs);
  });

  it("needs two distinct times", () => {
    expect(fitLinear([{ t: 1, v: 1 }])).toBeUndefined();
    expect(
      fitLinear([
        { t: 1, v: 1 },
        { t: 1, v: 2 },
      ]),
    ).toBeUndefined();
  });
});

describe("fitHolt", () => {
  it("tracks an exact line: slope and next value", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 4, max: 100 }),
        fc.integer({ min: 100, max: 10_000 }),
        fc.double({ min: 1e-5, max: 0.5, noNaN: true }),
        (n, step, slope) => {
          const points = line(n, 0, step, 10, slope);
          const fit = fitHolt(points)!;
          expect(fit.slopePerMs).toBeCloseTo(slope, 6);
          expect(predict(fit, points[n - 1]!.t + step)).toBeCloseTo(10 + slope * n * step, 3);
        },
      ),
    );
  });

  it("follows a change of trend faster than the least squares line", () => {
    const flat = line(30, 0, 1000, 100, 0);
    const rising = line(10, 31_000, 1000, 100, 0.05);
    const points = [...flat, ...rising];
    const holt = fitHolt(points)!;
    const linear = fitLinear(points)!;
    expect(Math.abs(holt.slopePerMs - 0.05)).toBeLessThan(Math.abs(linear.slopePerMs - 0.05));
  });
});

describe("quantile", () => {
  it.each([
    { name: "median of odd count", values: [3, 1, 2], q: 0.5, want: 2 },
    { name: "interpolated p95", values: [0, 10], q: 0.95, want: 9.5 },
    { name: "single value", values: [7], q: 0.95, want: 7 },
  ])("$name", ({ values, q, want }) => {
    expect(quantile(values, q)).toBeCloseTo(want, 9);
  });
  it("is undefined for no values", () => expect(quantile([], 0.5)).toBeUndefined());
});
