/**
 * The Redis event store through a Redis restart and an unreachable Redis, on a private redis-server
 * (so the shared one stays up). The private server runs without persistence: what was stored before
 * the restart is gone after it, which is what a cache-mode Redis does and the harshest case for
 * resuming subscriptions.
 */
import { createServer } from "node:net";
import { type EventStore, type EventStoreHealth, openEventStore } from "@persys/controlplane";
import { PersysError } from "@persys/schema";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../support/free-port.js";
import { type PrivateServer, startPrivateRedis } from "../support/private-servers.js";
import { fieldOf, SubscriptionReader, sleep } from "./event-store-helpers.js";

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(() => {
  process.on("unhandledRejection", onUnhandled);
  process.on("uncaughtException", onUnhandled);
});
afterAll(() => {
  process.off("unhandledRejection", onUnhandled);
  process.off("uncaughtException", onUnhandled);
});

const stores: EventStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
});

async function open(url: string, extra: Record<string, number> = {}): Promise<EventStore> {
  const store = await openEventStore({ kind: "redis", url, prefix: "outage:", subscribeBlockMs: 500, ...extra });
  stores.push(store);
  return store;
}

async function until(what: string, condition: () => boolean, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!condition()) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await sleep(10);
  }
  return Date.now() - started;
}

/** Resolves to "pending" when `promise` has not settled after `ms`. */
async function stateAfter(promise: Promise<unknown>, ms: number): Promise<"pending" | "settled"> {
  return Promise.race([
    promise.then(
      () => "settled" as const,
      () => "settled" as const,
    ),
    sleep(ms).then(() => "pending" as const),
  ]);
}

describe("Redis event store across a Redis restart", () => {
  let redis: PrivateServer & { url: string };
  beforeAll(async () => {
    redis = await startPrivateRedis();
    console.info(`[event-store outage] private Redis at ${redis.url}`);
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it("degrades, holds writes in a bounded buffer, fails reads fast, recovers and resumes the subscriber", async () => {
    const store = await open(redis.url, { maxBufferedWrites: 5 });
    const changes: EventStoreHealth[] = [];
    store.onHealthChange((health) => changes.push(health));
    const before = [await store.append("s", { fields: { n: "a1" } }), await store.append("s", { fields: { n: "a2" } })];
    const reader = new SubscriptionReader(await store.subscribe("s", { afterId: "0-0" }));
    expect((await reader.take(2)).map((e) => e.id)).toEqual(before);

    await redis.stop();
    const toDegraded = await until("health degraded", () => store.health().state === "degraded", 3_000);
    const health = store.health();
    expect(health.state).toBe("degraded");
    expect(health.state === "degraded" && health.reason).toMatch(/Redis at 127\.0\.0\.1:\d+/);
    console.info(`[event-store outage] degraded ${toDegraded} ms after Redis stopped: ${JSON.stringify(health)}`);

    // Reads fail fast with a retryable UNAVAILABLE.
    const started = Date.now();
    const readError = (await store.read("s").catch((e: unknown) => e)) as PersysError;
    expect(readError).toBeInstanceOf(PersysError);
    expect([readError.code, readError.retryable]).toEqual(["UNAVAILABLE", true]);
    expect(Date.now() - started).toBeLessThan(100);

    // Writes are held (their promises stay pending) up to the buffer bound; beyond it they fail fast.
    const held = ["b1", "b2", "b3", "b4"].map((n) => store.append("s", { fields: { n } }));
    const heldCount = store.incr("restarts");
    expect(await stateAfter(Promise.all([...held, heldCount]), 300)).toBe("pending");
    const overflow = (await store.append("s", { fields: { n: "lost" } }).catch((e: unknown) => e)) as PersysError;
    expect(overflow).toBeInstanceOf(PersysError);
    expect([overflow.code, overflow.retryable]).toEqual(["UNAVAILABLE", true]);
    expect(overflow.message).toContain("write buffer is full (5 writes waiting)");
    // The subscriber waits quietly.
    expect(await reader.next(300)).toBeUndefined();

    await redis.start();
    const toOk = await until("health ok", () => store.health().state === "ok", 10_000);
    console.info(`[event-store outage] ok again ${toOk} ms after Redis started`);
    const heldIds = await Promise.all(held);
    expect(await heldCount).toBe(1); // the restart lost the old data (no persistence): counts from 0
    const after = await store.append("s", { fields: { n: "c1" } });

    // The subscriber resumes after its last id: the held writes and the new one, no duplicates.
    const resumed = await reader.take(5);
    expect(resumed.map((e) => e.id)).toEqual([...heldIds, after]);
    expect(fieldOf(resumed, "n")).toEqual(["b1", "b2", "b3", "b4", "c1"]);
    expect(await reader.next(300)).toBeUndefined();
    expect(fieldOf(await store.read("s"), "n")).toEqual(["b1", "b2", "b3", "b4", "c1"]);

    expect(changes.map((c) => c.state)).toEqual([...Array(changes.length - 1).fill("degraded"), "ok"]);
    expect(changes.length).toBeGreaterThanOrEqual(2);
    await reader.close();
    expect(unhandled).toEqual([]);
  });

  it("fails a held write with UNAVAILABLE once it waited maxWriteWaitMs, without applying it", async () => {
    const store = await open(redis.url, { maxWriteWaitMs: 300 });
    await store.append("t", { fields: { n: "kept" } });
    await redis.stop();
    await until("health degraded", () => store.health().state === "degraded", 3_000);
    const started = Date.now();
    const error = (await store.append("t", { fields: { n: "timed out" } }).catch((e: unknown) => e)) as PersysError;
    const waited = Date.now() - started;
    expect(error).toBeInstanceOf(PersysError);
    expect([error.code, error.retryable]).toEqual(["UNAVAILABLE", true]);
    expect(error.message).toContain("waited 300 ms and was not applied");
    expect(waited).toBeGreaterThanOrEqual(250);
    expect(waited).toBeLessThan(1_500);
    await redis.start();
    await until("health ok", () => store.health().state === "ok", 10_000);
    expect(await store.read("t")).toEqual([]); // restart emptied it; the timed-out write never landed
    await store.append("t", { fields: { n: "after" } });
    expect(fieldOf(await store.read("t"), "n")).toEqual(["after"]);
    expect(unhandled).toEqual([]);
  });

  it("starts a subscription during an outage only with an explicit afterId, and it delivers once Redis is back", async () => {
    const store = await open(redis.url);
    await redis.stop();
    await until("health degraded", () => store.health().state === "degraded", 3_000);
    const now = (await store.subscribe("u").catch((e: unknown) => e)) as PersysError;
    expect([now.code, now.retryable]).toEqual(["UNAVAILABLE", true]);
    const reader = new SubscriptionReader(await store.subscribe("u", { afterId: "0-0" }));
    const pending = store.append("u", { fields: { n: "1" } });
    await redis.start();
    const id = await pending;
    expect((await reader.take(1, 10_000)).map((e) => e.id)).toEqual([id]);
    await reader.close();
    expect(unhandled).toEqual([]);
  });
});

describe("Redis event store without a Redis", () => {
  it("rejects open with UNAVAILABLE within connectTimeoutMs and leaves nothing running", async () => {
    const port = await freePort();
    const started = Date.now();
    const error = (await openEventStore({
      kind: "redis",
      url: `redis://127.0.0.1:${port}`,
      connectTimeoutMs: 500,
    }).catch((e: unknown) => e)) as PersysError;
    expect(error).toBeInstanceOf(PersysError);
    expect([error.code, error.retryable]).toEqual(["UNAVAILABLE", true]);
    expect(error.message).toContain(`cannot reach Redis at 127.0.0.1:${port} within 500 ms`);
    expect(Date.now() - started).toBeLessThan(2_000);
    // Nothing keeps reconnecting: a listener on that port now sees no connection attempt.
    let attempts = 0;
    const listener = createServer((socket) => {
      attempts++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(port, "127.0.0.1", resolve));
    await sleep(1_500);
    await new Promise((resolve) => listener.close(resolve));
    expect(attempts).toBe(0);
    expect(unhandled).toEqual([]);
  });
});
