import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ReadBatcher } from "./read-batcher.js";
import { MAX_TXN_OPS, type StateStore } from "./state-store.js";
import { openRecordingStore, type RecordingStore } from "./testing/recording-store.js";
import { decodeText, encodeText } from "./value-codec.js";

let recording: RecordingStore;
let store: StateStore;

beforeEach(async () => {
  recording = await openRecordingStore("persys-read-batcher-");
  store = recording.store;
});

afterEach(() => recording.close());

const text = (kv: { value: Uint8Array } | undefined) => (kv ? decodeText(kv.value) : undefined);

describe("ReadBatcher", () => {
  it("answers reads asked together from one transaction, each caller its own keys in order", async () => {
    await store.put("/a", encodeText("A"));
    await store.put("/b", encodeText("B"));
    recording.txns = [];
    const reads = new ReadBatcher(store);
    const [first, second, third] = await Promise.all([
      reads.read(["/a", "/missing"]),
      reads.read(["/b", "/a"]),
      reads.read(["/b"]),
    ]);
    expect(first.map(text)).toEqual(["A", undefined]);
    expect(second.map(text)).toEqual(["B", "A"]);
    expect(third.map(text)).toEqual(["B"]);
    expect(recording.txns).toHaveLength(1);
    expect((recording.txns[0]?.success ?? []).map((op) => op.key)).toEqual(["/a", "/missing", "/b"]);
  });

  it("sees every write acknowledged before the read was asked", async () => {
    const reads = new ReadBatcher(store);
    for (let n = 0; n < 20; n++) {
      await store.put("/k", encodeText(String(n)));
      expect(text((await reads.read(["/k"]))[0])).toBe(String(n));
    }
  });

  it("splits reads beyond one transaction's operations into several", async () => {
    const reads = new ReadBatcher(store);
    const keys = (from: number) => Array.from({ length: MAX_TXN_OPS }, (_, i) => `/k${from + i}`);
    const [a, b] = await Promise.all([reads.read(keys(0)), reads.read(keys(MAX_TXN_OPS))]);
    expect(a).toHaveLength(MAX_TXN_OPS);
    expect(b).toHaveLength(MAX_TXN_OPS);
    expect(recording.txns).toHaveLength(2);
    expect(() => reads.read(keys(0).concat("/one-more"))).toThrow(RangeError);
  });

  it("fails every caller of a merged read that failed", async () => {
    const reads = new ReadBatcher(
      Object.assign(Object.create(store) as StateStore, {
        txn: () => Promise.reject(new Error("store down")),
      }),
    );
    const outcomes = await Promise.allSettled([reads.read(["/a"]), reads.read(["/b"])]);
    expect(outcomes.map((o) => o.status)).toEqual(["rejected", "rejected"]);
  });
});
