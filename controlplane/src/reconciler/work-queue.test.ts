import { describe, expect, it } from "vitest";
import { WorkQueue } from "./work-queue.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("WorkQueue", () => {
  it("processes a key queued many times once", async () => {
    const seen: string[] = [];
    const queue = new WorkQueue(async (key) => void seen.push(key));
    for (let i = 0; i < 10; i++) queue.add("a");
    queue.add("b");
    await queue.idle();
    expect(seen.sort()).toEqual(["a", "b"]);
  });

  it("never processes one key twice at once, and reprocesses a key changed while it ran", async () => {
    let running = 0;
    let maxRunning = 0;
    let runs = 0;
    const queue = new WorkQueue(async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      runs++;
      await sleep(20);
      running--;
    });
    queue.add("a");
    await sleep(5);
    queue.add("a");
    queue.add("a");
    await sleep(60);
    await queue.idle();
    expect(maxRunning).toBe(1);
    expect(runs).toBe(2);
  });

  it("backs off exponentially per key with bounded jitter, and forget resets it", () => {
    const queue = new WorkQueue(async () => {}, { baseDelayMs: 100, maxDelayMs: 1_000, jitter: 0.5, random: () => 1 });
    const delays = [1, 2, 3, 4, 5].map(() => queue.nextBackoff("k"));
    expect(delays).toEqual([150, 300, 600, 1_200, 1_500]);
    queue.forget("k");
    expect(queue.nextBackoff("k")).toBe(150);
    expect(queue.nextBackoff("other")).toBe(150);
  });

  it("runs delayed keys after their delay, keeping the earliest", async () => {
    const seen: Array<[string, number]> = [];
    const start = Date.now();
    const queue = new WorkQueue(async (key) => void seen.push([key, Date.now() - start]));
    queue.addAfter("late", 200);
    queue.addAfter("late", 40);
    await sleep(120);
    expect(seen.map(([k]) => k)).toEqual(["late"]);
    expect(seen[0]![1]).toBeGreaterThanOrEqual(35);
    await queue.stop();
  });

  it("retries a key whose handler threw, with backoff", async () => {
    let attempts = 0;
    const queue = new WorkQueue(
      async () => {
        attempts++;
        if (attempts < 3) throw new Error("transient");
      },
      { baseDelayMs: 10, jitter: 0 },
    );
    queue.add("k");
    await sleep(100);
    expect(attempts).toBe(3);
    await queue.stop();
  });

  it("limits the overall retry rate with a token bucket, on top of each key's backoff", () => {
    const queue = new WorkQueue(async () => {}, { baseDelayMs: 1, jitter: 0, ratePerSecond: 50, burst: 5 });
    const delays = Array.from({ length: 20 }, (_, i) => queue.nextBackoff(`k${i}`));
    // The burst goes at once; then one retry every 20 ms (50 a second).
    expect(delays.slice(0, 5)).toEqual([1, 1, 1, 1, 1]);
    expect(delays[5]).toBeGreaterThanOrEqual(15);
    expect(delays[5]).toBeLessThanOrEqual(20);
    expect(delays[19]).toBeGreaterThanOrEqual(280);
    expect(delays[19]).toBeLessThanOrEqual(300);
  });

  it("does not rate limit fresh work: adds run as fast as the concurrency allows", async () => {
    let runs = 0;
    const queue = new WorkQueue(async () => void runs++, { ratePerSecond: 50, burst: 5, concurrency: 64 });
    for (let i = 0; i < 5_000; i++) queue.add(`k${i}`);
    await queue.idle();
    expect(runs).toBe(5_000);
    expect(queue.depth).toBe(0);
    await queue.stop();
  });
});
