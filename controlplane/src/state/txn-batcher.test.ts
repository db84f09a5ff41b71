import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MAX_TXN_OPS, type StateStore } from "./state-store.js";
import { openRecordingStore, type RecordingStore } from "./testing/recording-store.js";
import { TxnBatcher } from "./txn-batcher.js";
import { encodeText } from "./value-codec.js";

let recording: RecordingStore;
let store: StateStore;

beforeEach(async () => {
  recording = await openRecordingStore("persys-batcher-");
  store = recording.store;
});

afterEach(() => recording.close());

const create = (key: string) => ({
  compare: [{ key, target: "version" as const, op: "=" as const, value: 0 }],
  ops: [{ type: "put" as const, key, value: encodeText("v") }],
});

describe("TxnBatcher", () => {
  it("writes items submitted together in one transaction, each item's compares included", async () => {
    const batcher = new TxnBatcher(store, () => undefined);
    const outcomes = await Promise.all(["/a", "/b", "/c"].map((k) => batcher.submit(create(k))));
    expect(outcomes.every((o) => o.succeeded)).toBe(true);
    expect(new Set(outcomes.map((o) => o.revision)).size).toBe(1);
    expect(recording.txns).toHaveLength(1);
    expect(recording.txns[0]!.compare).toHaveLength(3);
    expect((await store.get("/b"))?.value).toEqual(encodeText("v"));
  });

  it("retries a merged transaction item by item, so only the item whose compare failed reports it", async () => {
    const batcher = new TxnBatcher(store, () => undefined);
    await batcher.submit(create("/taken"));
    recording.txns = [];
    const outcomes = await Promise.all(["/x", "/taken", "/y"].map((k) => batcher.submit(create(k))));
    expect(outcomes.map((o) => o.succeeded)).toEqual([true, false, true]);
    expect(recording.txns).toHaveLength(4); // the merged one, then each alone
    expect(await store.get("/x")).toBeDefined();
    expect(await store.get("/y")).toBeDefined();
  });

  it("splits a burst into transactions of at most MAX_TXN_OPS ops and compares", async () => {
    const batcher = new TxnBatcher(store, () => undefined);
    const count = MAX_TXN_OPS * 3 + 5;
    const outcomes = await Promise.all(Array.from({ length: count }, (_, i) => batcher.submit(create(`/burst/${i}`))));
    expect(outcomes.every((o) => o.succeeded)).toBe(true);
    expect(recording.txns.length).toBeGreaterThanOrEqual(4);
    for (const t of recording.txns) {
      expect(t.success!.length).toBeLessThanOrEqual(MAX_TXN_OPS);
      expect(t.compare!.length).toBeLessThanOrEqual(MAX_TXN_OPS);
    }
    expect(recording.txns.reduce((n, t) => n + t.success!.length, 0)).toBe(count);
    expect((await store.range("/burst/")).count).toBe(count);
  });
});
