import type { EventStore } from "@persys/controlplane";
import { expect, it } from "vitest";
import type { StoreSource } from "./event-store.conformance.js";
import { sleep } from "./event-store-helpers.js";

/** Counters (increments, expiry) and series (order, replacement, downsampling, retention). */
export function countersAndSeriesConformance(stores: StoreSource): void {
  it("counts: increments by 1 or by a given amount, negative too; unknown counters read 0", async () => {
    const store = await stores.fresh();
    const steps: Array<{ name: string; run: (s: EventStore) => Promise<number>; expected: number }> = [
      { name: "unknown reads 0", run: (s) => s.getCounter("retries/web"), expected: 0 },
      { name: "incr defaults to 1", run: (s) => s.incr("retries/web"), expected: 1 },
      { name: "incr by 5", run: (s) => s.incr("retries/web", 5), expected: 6 },
      { name: "incr by -2", run: (s) => s.incr("retries/web", -2), expected: 4 },
      { name: "get after increments", run: (s) => s.getCounter("retries/web"), expected: 4 },
      { name: "other keys are apart", run: (s) => s.getCounter("retries/db"), expected: 0 },
    ];
    for (const { name, run, expected } of steps) expect(await run(store), name).toBe(expected);
  });

  it("counts concurrent increments exactly", async () => {
    const store = await stores.fresh();
    const values = await Promise.all(Array.from({ length: 100 }, () => store.incr("c")));
    expect([...values].sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(await store.getCounter("c")).toBe(100);
  });

  it("expires an idle stream, counter and series after their TTL", async () => {
    const store = await stores.fresh();
    const now = Date.now();
    await store.append("s", { fields: { n: "1" } }, { ttlSeconds: 1 });
    await store.incr("c", 7, { ttlSeconds: 1 });
    await store.addSample("cpu", now, 0.5, { maxAgeMs: 1_000 });
    await store.incr("kept", 1, { ttlSeconds: 60 });
    expect(await store.read("s")).toHaveLength(1);
    expect(await store.getCounter("c")).toBe(7);
    expect(await store.range("cpu", 0, now + 1)).toHaveLength(1);
    await sleep(2_100);
    expect(await store.read("s")).toEqual([]);
    expect(await store.getCounter("c")).toBe(0);
    expect(await store.range("cpu", 0, now + 1)).toEqual([]);
    expect(await store.getCounter("kept")).toBe(1);
    expect(await store.incr("c")).toBe(1); // an expired counter starts again from 0
  });

  it("returns series points in time order, inclusive, whatever order they were added in", async () => {
    const store = await stores.fresh();
    const base = Date.now() - 10_000;
    for (const [dt, value] of [
      [3, 30],
      [1, 10.5],
      [2, -20],
      [0, 0.1],
    ] as const)
      await store.addSample("node/n1/cpu", base + dt, value);
    expect(await store.range("node/n1/cpu", base, base + 3)).toEqual([
      { timestampMs: base, value: 0.1 },
      { timestampMs: base + 1, value: 10.5 },
      { timestampMs: base + 2, value: -20 },
      { timestampMs: base + 3, value: 30 },
    ]);
    expect((await store.range("node/n1/cpu", base + 1, base + 2)).map((p) => p.value)).toEqual([10.5, -20]);
    expect(await store.range("node/n1/cpu", base + 4, base + 100)).toEqual([]);
    expect(await store.range("unknown", 0, base)).toEqual([]);
  });

  it("replaces a point by a later sample at the same timestamp (so a repeated sample is idempotent)", async () => {
    const store = await stores.fresh();
    const t = Date.now() - 1_000;
    await store.addSample("m", t, 1);
    await store.addSample("m", t, 2);
    await store.addSample("m", t, 2);
    expect(await store.range("m", t, t)).toEqual([{ timestampMs: t, value: 2 }]);
  });

  it("downsamples with resolutionMs: timestamps round down, the last sample in a bucket wins", async () => {
    const store = await stores.fresh();
    const base = Math.floor((Date.now() - 60_000) / 1_000) * 1_000;
    const samples: Array<[number, number]> = [
      [0, 1],
      [500, 2],
      [999, 3],
      [1_000, 4],
      [2_500, 5],
    ];
    for (const [dt, value] of samples) await store.addSample("m", base + dt, value, { resolutionMs: 1_000 });
    expect(await store.range("m", base, base + 5_000)).toEqual([
      { timestampMs: base, value: 3 },
      { timestampMs: base + 1_000, value: 4 },
      { timestampMs: base + 2_000, value: 5 },
    ]);
  });

  it("keeps at most maxPoints points, the newest by timestamp", async () => {
    const store = await stores.fresh();
    const base = Date.now() - 100_000;
    for (let i = 0; i < 50; i++) await store.addSample("m", base + i * 1_000, i, { maxPoints: 10 });
    await store.addSample("m", base - 5_000, -1, { maxPoints: 10 }); // older than all kept: dropped
    const points = await store.range("m", 0, base + 100_000);
    expect(points.map((p) => p.value)).toEqual([40, 41, 42, 43, 44, 45, 46, 47, 48, 49]);
  });

  it("drops points older than maxAgeMs, also ones that arrive late", async () => {
    const store = await stores.fresh();
    const now = Date.now();
    const hour = 3_600_000;
    await store.addSample("m", now - 3 * hour, 1, { maxAgeMs: 24 * hour });
    await store.addSample("m", now - 30 * 60_000, 2, { maxAgeMs: hour }); // trims the 3 h old point
    await store.addSample("m", now - 2 * hour, 3, { maxAgeMs: hour }); // too old on arrival
    expect((await store.range("m", 0, now)).map((p) => p.value)).toEqual([2]);
  });

  it("bounds samples that give no options by the store's default retention", async () => {
    const store = await stores.fresh({ seriesMaxPoints: 3 });
    const base = Date.now() - 10_000;
    for (let i = 0; i < 5; i++) await store.addSample("m", base + i, i);
    expect((await store.range("m", 0, base + 10)).map((p) => p.value)).toEqual([2, 3, 4]);
  });
}
