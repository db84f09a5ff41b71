import type { EventStore, EventStoreHealth } from "@persys/controlplane";
import { PersysError } from "@persys/schema";
import { expect, it } from "vitest";
import type { StoreSource } from "./event-store.conformance.js";

const bad = (value: unknown) => value as never;

const cases: Array<{ name: string; call: (s: EventStore) => Promise<unknown>; paths: string[] }> = [
  { name: "empty stream name", call: (s) => s.append("", { fields: {} }), paths: ["stream"] },
  { name: "stream name with a space", call: (s) => s.append("a b", { fields: {} }), paths: ["stream"] },
  { name: "stream name not a string", call: (s) => s.append(bad(7), { fields: {} }), paths: ["stream"] },
  { name: "negative maxLen", call: (s) => s.append("s", { fields: {} }, { maxLen: -1 }), paths: ["options.maxLen"] },
  { name: "zero maxLen", call: (s) => s.append("s", { fields: {} }, { maxLen: 0 }), paths: ["options.maxLen"] },
  { name: "fractional maxLen", call: (s) => s.append("s", { fields: {} }, { maxLen: 1.5 }), paths: ["options.maxLen"] },
  {
    name: "zero ttlSeconds",
    call: (s) => s.append("s", { fields: {} }, { ttlSeconds: 0 }),
    paths: ["options.ttlSeconds"],
  },
  {
    name: "NaN maxAgeMs",
    call: (s) => s.append("s", { fields: {} }, { maxAgeMs: Number.NaN }),
    paths: ["options.maxAgeMs"],
  },
  { name: "record not an object", call: (s) => s.append("s", bad("text")), paths: ["record"] },
  { name: "fields missing", call: (s) => s.append("s", bad({ payload: 1 })), paths: ["record.fields"] },
  { name: "reserved field name", call: (s) => s.append("s", { fields: { _p: "x" } }), paths: ["record.fields._p"] },
  {
    name: "field value not a string",
    call: (s) => s.append("s", { fields: bad({ n: 1 }) }),
    paths: ["record.fields.n"],
  },
  {
    name: "payload not JSON",
    call: (s) => s.append("s", { fields: {}, payload: bad({ big: 1n }) }),
    paths: ["record.payload"],
  },
  {
    name: "record over 64 KiB",
    call: (s) => s.append("s", { fields: {}, payload: "x".repeat(70_000) }),
    paths: ["record"],
  },
  {
    name: "several bad fields at once",
    call: (s) => s.append("", { fields: bad({ n: 1 }) }, { maxLen: -1 }),
    paths: ["stream", "record.fields.n", "options.maxLen"],
  },
  { name: "read limit 0", call: (s) => s.read("s", { limit: 0 }), paths: ["options.limit"] },
  { name: "read limit over 10,000", call: (s) => s.read("s", { limit: 10_001 }), paths: ["options.limit"] },
  { name: "read fromMs NaN", call: (s) => s.read("s", { fromMs: Number.NaN }), paths: ["options.fromMs"] },
  { name: "read afterId not an id", call: (s) => s.read("s", { afterId: "abc" }), paths: ["options.afterId"] },
  { name: "read reverse not boolean", call: (s) => s.read("s", { reverse: bad("yes") }), paths: ["options.reverse"] },
  { name: "subscribe to no stream", call: (s) => s.subscribe([]), paths: ["streams"] },
  { name: "subscribe bad stream in list", call: (s) => s.subscribe(["ok", ""]), paths: ["streams[1]"] },
  {
    name: "subscribe afterId for an unsubscribed stream",
    call: (s) => s.subscribe(["a"], { afterId: { b: "1-0" } }),
    paths: ["options.afterId.b"],
  },
  {
    name: "subscribe afterId not an id",
    call: (s) => s.subscribe("a", { afterId: "later" }),
    paths: ["options.afterId"],
  },
  { name: "incr by NaN", call: (s) => s.incr("c", Number.NaN), paths: ["by"] },
  { name: "incr by a fraction", call: (s) => s.incr("c", 1.5), paths: ["by"] },
  { name: "incr negative ttl", call: (s) => s.incr("c", 1, { ttlSeconds: -1 }), paths: ["options.ttlSeconds"] },
  { name: "getCounter empty key", call: (s) => s.getCounter(""), paths: ["key"] },
  { name: "sample value NaN", call: (s) => s.addSample("m", 1, Number.NaN), paths: ["value"] },
  { name: "sample value Infinity", call: (s) => s.addSample("m", 1, Number.POSITIVE_INFINITY), paths: ["value"] },
  { name: "sample negative timestamp", call: (s) => s.addSample("m", -1, 1), paths: ["timestampMs"] },
  { name: "sample maxPoints 0", call: (s) => s.addSample("m", 1, 1, { maxPoints: 0 }), paths: ["options.maxPoints"] },
  {
    name: "sample resolution 0",
    call: (s) => s.addSample("m", 1, 1, { resolutionMs: 0 }),
    paths: ["options.resolutionMs"],
  },
  { name: "range reversed", call: (s) => s.range("m", 10, 5), paths: ["toMs"] },
  { name: "range empty series name", call: (s) => s.range("", 0, 1), paths: ["series"] },
];

/** Typed argument errors, health, and what closing does. */
export function errorsConformance(stores: StoreSource): void {
  it.each(cases)("rejects bad arguments with INVALID_ARGUMENT naming the field: $name", async ({ call, paths }) => {
    const store = await stores.fresh();
    const error = await call(store).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PersysError);
    const typed = error as PersysError;
    expect(typed.code).toBe("INVALID_ARGUMENT");
    expect(typed.retryable).toBe(false);
    expect(typed.details.map((d) => d.path)).toEqual(paths);
    for (const path of paths) expect(typed.message).toContain(path);
    // Nothing was written by the rejected call.
    expect(await store.read("s")).toEqual([]);
    expect(await store.getCounter("c")).toBe(0);
    expect(await store.range("m", 0, Date.now())).toEqual([]);
  });

  it("reports ok health once open, and tells listeners about the change to closed", async () => {
    const store = await stores.fresh();
    expect(store.health()).toEqual({ state: "ok" });
    const seen: EventStoreHealth[] = [];
    const removed: EventStoreHealth[] = [];
    store.onHealthChange((h) => seen.push(h));
    const off = store.onHealthChange((h) => removed.push(h));
    off();
    store.onHealthChange(() => {
      throw new Error("a broken listener must not break the store");
    });
    await store.close();
    expect(seen).toEqual([{ state: "degraded", reason: "closed" }]);
    expect(removed).toEqual([]);
  });

  it("rejects every call after close with UNAVAILABLE, not retryable; close is idempotent", async () => {
    const store = await stores.fresh();
    await store.close();
    await store.close();
    const calls: Array<() => Promise<unknown>> = [
      () => store.append("s", { fields: {} }),
      () => store.read("s"),
      () => store.subscribe("s"),
      () => store.incr("c"),
      () => store.getCounter("c"),
      () => store.addSample("m", 1, 1),
      () => store.range("m", 0, 1),
    ];
    for (const call of calls) {
      const error = (await call().catch((e: unknown) => e)) as PersysError;
      expect(error).toBeInstanceOf(PersysError);
      expect([error.code, error.retryable]).toEqual(["UNAVAILABLE", false]);
    }
  });
}
