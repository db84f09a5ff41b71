import { compareEventIds, type EventReadOptions, type EventRecord, eventIdTime } from "@persys/controlplane";
import { expect, it } from "vitest";
import type { StoreSource } from "./event-store.conformance.js";
import { fieldOf, sleep } from "./event-store-helpers.js";

/** Appending, reading by id and time, caps, age windows and idle expiry. */
export function streamsConformance(stores: StoreSource): void {
  it("appends with increasing time-ordered ids and reads the records back in order", async () => {
    const store = await stores.fresh();
    const records: EventRecord[] = [
      { fields: { type: "Scheduled", workload: "web", replica: "0", node: "n1" } },
      { fields: { type: "Failed", reason: "IMAGE_PULL_FAILED" }, payload: { attempt: 2, nextRetryAt: null } },
      { fields: {}, payload: ["a", 1, true] },
      { fields: { message: "0/3 nodes fit: 3 insufficient memory — ünïcödé ✓" }, payload: "text" },
      { fields: { empty: "" }, payload: 0 },
      { fields: { type: "x" }, payload: null },
    ];
    const before = Date.now();
    const ids: string[] = [];
    for (const record of records) ids.push(await store.append("workload/web", record));
    const after = Date.now();

    for (const id of ids) {
      expect(id).toMatch(/^\d+-\d+$/);
      // The id's time is the store's clock at append (Redis runs on this machine).
      expect(eventIdTime(id)).toBeGreaterThanOrEqual(before - 1_000);
      expect(eventIdTime(id)).toBeLessThanOrEqual(after + 1_000);
    }
    for (let i = 1; i < ids.length; i++)
      expect(compareEventIds(ids[i - 1] as string, ids[i] as string)).toBeLessThan(0);

    const events = await store.read("workload/web");
    expect(events.map((e) => e.id)).toEqual(ids);
    events.forEach((event, i) => {
      const record = records[i] as EventRecord;
      expect(event.stream).toBe("workload/web");
      expect(event.timeMs).toBe(eventIdTime(event.id));
      expect(event.fields).toEqual(record.fields);
      if (record.payload === undefined) expect("payload" in event).toBe(false);
      else expect(event.payload).toEqual(record.payload);
    });
  });

  it("gives concurrent appends to one stream ids in call order", async () => {
    const store = await stores.fresh();
    const ids = await Promise.all(
      Array.from({ length: 200 }, (_, i) => store.append("s", { fields: { seq: String(i) } })),
    );
    expect([...ids].sort(compareEventIds)).toEqual(ids);
    expect(new Set(ids).size).toBe(200);
    const events = await store.read("s");
    expect(fieldOf(events, "seq")).toEqual(Array.from({ length: 200 }, (_, i) => String(i)));
  });

  it("appends one event to several streams at once, in order with plain appends, and caps each stream", async () => {
    const store = await stores.fresh();
    const first = await store.append("global", { fields: { n: "0" } });
    const ids = await store.appendEach(
      ["global", "workload/web"],
      { fields: { type: "ReplicaPlaced", n: "1" }, payload: { revision: "r1" } },
      { maxLen: 2 },
    );
    expect(ids).toHaveLength(2);
    expect(compareEventIds(first, ids[0] as string)).toBeLessThan(0);
    const more = await Promise.all([
      store.appendEach(["global", "workload/web"], { fields: { n: "2" } }, { maxLen: 2 }),
      store.append("global", { fields: { n: "3" } }, { maxLen: 2 }),
    ]);
    const global = await store.read("global");
    expect(fieldOf(global, "n")).toEqual(["2", "3"]);
    expect(global[0]?.id).toBe(more[0][0]);
    const web = await store.read("workload/web");
    expect(web.map((e) => e.id)).toEqual([ids[1], more[0][1]]);
    expect(web[0]?.fields).toEqual({ type: "ReplicaPlaced", n: "1" });
    expect(web[0]?.payload).toEqual({ revision: "r1" });
  });

  it("appends nothing when one of the streams is not a valid name, naming it", async () => {
    const store = await stores.fresh();
    const failure = await store.appendEach(["good", "bad name!"], { fields: { n: "1" } }).catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: "INVALID_ARGUMENT" });
    expect((failure as { details: { path: string }[] }).details.map((d) => d.path)).toEqual(["streams[1]"]);
    const none = await store.appendEach([], { fields: {} }).catch((e: unknown) => e);
    expect((none as { details: { path: string }[] }).details.map((d) => d.path)).toEqual(["streams"]);
    expect(await store.read("good")).toEqual([]);
  });

  it("reads an unknown stream as empty", async () => {
    const store = await stores.fresh();
    expect(await store.read("never-written")).toEqual([]);
  });

  it("keeps streams apart", async () => {
    const store = await stores.fresh();
    await store.append("a", { fields: { n: "1" } });
    await store.append("b", { fields: { n: "2" } });
    expect(fieldOf(await store.read("a"), "n")).toEqual(["1"]);
    expect(fieldOf(await store.read("b"), "n")).toEqual(["2"]);
  });

  const byId: Array<{ name: string; options: (ids: string[]) => EventReadOptions; expected: number[] }> = [
    { name: "everything, oldest first", options: () => ({}), expected: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] },
    { name: "limit keeps the oldest", options: () => ({ limit: 3 }), expected: [0, 1, 2] },
    { name: "reverse with limit keeps the newest", options: () => ({ reverse: true, limit: 3 }), expected: [9, 8, 7] },
    { name: "afterId is exclusive", options: (ids) => ({ afterId: ids[3] }), expected: [4, 5, 6, 7, 8, 9] },
    { name: "beforeId is exclusive", options: (ids) => ({ beforeId: ids[3] }), expected: [0, 1, 2] },
    { name: "between two ids", options: (ids) => ({ afterId: ids[2], beforeId: ids[6] }), expected: [3, 4, 5] },
    { name: "next page forwards", options: (ids) => ({ afterId: ids[4], limit: 2 }), expected: [5, 6] },
    {
      name: "next page in reverse",
      options: (ids) => ({ beforeId: ids[7], limit: 2, reverse: true }),
      expected: [6, 5],
    },
    { name: "nothing after the last", options: (ids) => ({ afterId: ids[9] }), expected: [] },
    { name: "nothing before 0-0", options: () => ({ beforeId: "0-0" }), expected: [] },
    { name: "everything after 0-0", options: () => ({ afterId: "0-0", limit: 2 }), expected: [0, 1] },
    { name: "crossed bounds are empty", options: (ids) => ({ afterId: ids[6], beforeId: ids[2] }), expected: [] },
  ];
  it.each(byId)("reads by id: $name", async ({ options, expected }) => {
    const store = await stores.fresh();
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push(await store.append("s", { fields: { n: String(i) } }));
    const events = await store.read("s", options(ids));
    expect(fieldOf(events, "n")).toEqual(expected.map(String));
  });

  it("reads by time range, inclusive at both ends, combined with ids", async () => {
    const store = await stores.fresh();
    const append = (n: string) => store.append("s", { fields: { n } });
    const a = [await append("a0"), await append("a1")];
    await sleep(40);
    const b = [await append("b0"), await append("b1")];
    await sleep(40);
    await append("c0");
    const [b0, b1] = b.map(eventIdTime) as [number, number];
    const cases: Array<{ options: EventReadOptions; expected: string[] }> = [
      { options: { fromMs: b0 }, expected: ["b0", "b1", "c0"] },
      { options: { toMs: b1 }, expected: ["a0", "a1", "b0", "b1"] },
      { options: { fromMs: b0, toMs: b1 }, expected: ["b0", "b1"] },
      { options: { fromMs: b0, toMs: b1, reverse: true }, expected: ["b1", "b0"] },
      { options: { fromMs: eventIdTime(a[0] as string), afterId: b[0] }, expected: ["b1", "c0"] },
      { options: { toMs: b1, beforeId: a[1] }, expected: ["a0"] },
      { options: { fromMs: b1 + 10_000 }, expected: [] },
    ];
    for (const { options, expected } of cases) {
      expect(fieldOf(await store.read("s", options), "n"), JSON.stringify(options)).toEqual(expected);
    }
  });

  it("caps a stream: 1,000 appends with maxLen 100 keep exactly the newest 100", async () => {
    const store = await stores.fresh();
    const started = performance.now();
    const ids = await Promise.all(
      Array.from({ length: 1_000 }, (_, i) => store.append("capped", { fields: { n: String(i) } }, { maxLen: 100 })),
    );
    const elapsed = performance.now() - started;
    console.info(`[event-store ${store.kind}] 1,000 capped appends in ${elapsed.toFixed(0)} ms`);
    const kept = await store.read("capped", { limit: 1_000 });
    expect(kept.map((e) => e.id)).toEqual(ids.slice(-100));
    // The cap is exact at any length, not only at multiples of an internal node size.
    for (let i = 0; i < 37; i++) ids.push(await store.append("capped", { fields: { n: `x${i}` } }, { maxLen: 100 }));
    expect((await store.read("capped", { limit: 1_000 })).map((e) => e.id)).toEqual(ids.slice(-100));
  });

  it("bounds appends that give no options by the store's default cap", async () => {
    const store = await stores.fresh({ streamMaxLen: 5 });
    for (let i = 0; i < 12; i++) await store.append("s", { fields: { n: String(i) } });
    expect(fieldOf(await store.read("s"), "n")).toEqual(["7", "8", "9", "10", "11"]);
  });

  it("trims events older than maxAgeMs at the next append", async () => {
    const store = await stores.fresh();
    await store.append("s", { fields: { n: "old0" } });
    await store.append("s", { fields: { n: "old1" } });
    await sleep(300);
    await store.append("s", { fields: { n: "new" } }, { maxAgeMs: 150 });
    expect(fieldOf(await store.read("s"), "n")).toEqual(["new"]);
  });

  it("expires an idle stream after ttlSeconds, each append refreshing it, and restarts later with larger ids", async () => {
    const store = await stores.fresh();
    const first = await store.append("s", { fields: { n: "1" } }, { ttlSeconds: 2 });
    await sleep(1_200);
    const second = await store.append("s", { fields: { n: "2" } }, { ttlSeconds: 2 });
    await sleep(1_200); // 2.4 s after the first append, 1.2 s after the refresh
    expect(fieldOf(await store.read("s"), "n")).toEqual(["1", "2"]);
    await sleep(1_300); // 2.5 s idle
    expect(await store.read("s")).toEqual([]);
    const third = await store.append("s", { fields: { n: "3" } }, { ttlSeconds: 2 });
    expect(compareEventIds(third, second)).toBeGreaterThan(0);
    expect(compareEventIds(second, first)).toBeGreaterThan(0);
    expect(fieldOf(await store.read("s"), "n")).toEqual(["3"]);
  });

  it("keeps data across a reopen of the same location, with ids still increasing", async () => {
    const store = await stores.fresh();
    const ids = [await store.append("s", { fields: { n: "1" } }), await store.append("s", { fields: { n: "2" } })];
    await store.incr("c", 3);
    await store.close();
    const again = await stores.reopen(store);
    expect((await again.read("s")).map((e) => e.id)).toEqual(ids);
    expect(await again.getCounter("c")).toBe(3);
    const next = await again.append("s", { fields: { n: "3" } });
    expect(compareEventIds(next, ids[1] as string)).toBeGreaterThan(0);
  });
}
