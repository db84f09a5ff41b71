/**
 * Conformance: watches — from a revision, resumable without gaps or duplicates, per prefix, whole
 * transactions per batch, cancellation, compaction.
 */
import type { StateStore, WatchEvent } from "@persys/controlplane";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  bytes,
  rejection,
  type StateStoreHarness,
  sleep,
  summary,
  uniquePrefix,
  WatchRecorder,
} from "./state-store-helpers.js";

export function describeWatches(harness: StateStoreHarness): void {
  describe("watches", () => {
    let store: StateStore;
    beforeAll(async () => {
      store = await harness.open();
    });
    afterAll(() => store?.close());

    it("watch from a revision resumes from the last seen revision without missing or repeating events", async () => {
      const p = uniquePrefix("resume");
      const expected: string[] = [];
      const write = async (i: number) => {
        const { revision } = await store.put(`${p}k${i % 4}`, bytes(`v${i}`));
        expected.push(`put ${p}k${i % 4}@${revision}=v${i}`);
        return revision;
      };
      const revisions: number[] = [];
      for (let i = 0; i < 10; i++) revisions.push(await write(i));
      const middle = revisions[4]!;

      const first = new WatchRecorder();
      const watch1 = await store.watch(p, { afterRevision: middle, onEvents: first.onEvents });
      await first.untilCount(5);
      await watch1.cancel();
      expect(await watch1.ended).toBeUndefined();
      const lastSeen = first.events.at(-1)!.revision;
      expect(watch1.lastRevision).toBe(lastSeen);

      // Changes while nobody watches: puts, a delete and a transaction.
      for (let i = 10; i < 15; i++) await write(i);
      const del = await store.delete(`${p}k1`);
      expected.push(`delete ${p}k1@${del.revision}`);
      const txn = await store.txn({
        success: [
          { type: "put", key: `${p}t1`, value: bytes("a") },
          { type: "delete", key: `${p}k2` },
        ],
      });
      expected.push(`put ${p}t1@${txn.revision}=a`, `delete ${p}k2@${txn.revision}`);

      const second = new WatchRecorder();
      const watch2 = await store.watch(p, { afterRevision: lastSeen, onEvents: second.onEvents });
      await second.untilCount(expected.length - 5 - 5);
      await sleep(200); // nothing more may arrive
      await watch2.cancel();

      const seen = [...first.events, ...second.events].map(summary);
      expect(seen).toEqual(expected.slice(5));
      const all = [...first.events, ...second.events].map((e) => e.revision);
      expect(all).toEqual([...all].sort((a, b) => a - b));
    });

    it("a watch without afterRevision sees only what changes after it started", async () => {
      const p = uniquePrefix("from-now");
      await store.put(`${p}before`, bytes("old"));
      const recorder = new WatchRecorder();
      const watch = await store.watch(p, { onEvents: recorder.onEvents });
      const { revision } = await store.put(`${p}after`, bytes("new"));
      await recorder.untilCount(1);
      await sleep(100);
      await watch.cancel();
      expect(recorder.events.map(summary)).toEqual([`put ${p}after@${revision}=new`]);
      expect(watch.lastRevision).toBe(revision);
    });

    it("a transaction's events arrive together in one batch, at one revision, in op order", async () => {
      const p = uniquePrefix("txn-batch");
      await store.put(`${p}gone`, bytes("x"));
      const recorder = new WatchRecorder();
      const watch = await store.watch(p, { onEvents: recorder.onEvents });
      const { revision } = await store.txn({
        success: [
          { type: "put", key: `${p}b`, value: bytes("1") },
          { type: "put", key: `${p}a`, value: bytes("2") },
          { type: "delete", key: `${p}gone` },
        ],
      });
      await recorder.untilCount(3);
      await watch.cancel();
      expect(recorder.batches).toHaveLength(1);
      expect(recorder.batches[0]!.revision).toBe(revision);
      expect(recorder.events.map(summary)).toEqual([
        `put ${p}b@${revision}=1`,
        `put ${p}a@${revision}=2`,
        `delete ${p}gone@${revision}`,
      ]);
      const put = recorder.events[0] as Extract<WatchEvent, { type: "put" }>;
      expect(put.kv).toMatchObject({ key: `${p}b`, createRevision: revision, modRevision: revision, version: 1 });
    });

    it("a watch sees only its prefix, and a deletePrefix as one delete event per key", async () => {
      const p = uniquePrefix("prefix-only");
      const recorder = new WatchRecorder();
      const watch = await store.watch(`${p}in/`, { onEvents: recorder.onEvents });
      await store.put(`${p}in/a`, bytes("1"));
      await store.put(`${p}in-not/a`, bytes("sibling"));
      await store.put(`${p}out`, bytes("outside"));
      await store.put(`${p}in/b`, bytes("2"));
      const { revision } = await store.deletePrefix(`${p}in/`);
      await recorder.until((events) => events.some((e) => e.type === "delete" && e.key === `${p}in/b`), "deletes");
      await watch.cancel();
      expect(recorder.events.map((e) => `${e.type} ${e.key.slice(p.length)}`)).toEqual([
        "put in/a",
        "put in/b",
        "delete in/a",
        "delete in/b",
      ]);
      expect(recorder.events.slice(2).map((e) => e.revision)).toEqual([revision, revision]);
    });

    it("after cancel nothing more is delivered", async () => {
      const p = uniquePrefix("cancel");
      const recorder = new WatchRecorder();
      const watch = await store.watch(p, { onEvents: recorder.onEvents });
      await store.put(`${p}one`, bytes("1"));
      await recorder.untilCount(1);
      await watch.cancel();
      await watch.cancel();
      await store.put(`${p}two`, bytes("2"));
      await sleep(300);
      expect(recorder.events.map((e) => e.key)).toEqual([`${p}one`]);
    });

    it("a listener that writes to the store does not reorder what it is given", async () => {
      const p = uniquePrefix("reentrant");
      const revisions: number[] = [];
      let echoed = 0;
      const watch = await store.watch(p, {
        onEvents: (batch) => {
          for (const e of batch.events) revisions.push(e.revision);
          if (echoed++ < 5) void store.put(`${p}echo-${echoed}`, bytes("e"));
        },
      });
      await Promise.all([1, 2, 3].map((i) => store.put(`${p}start-${i}`, bytes("s"))));
      const deadline = Date.now() + 10_000;
      while (revisions.length < 8 && Date.now() < deadline) await sleep(50);
      await watch.cancel();
      expect(revisions.length).toBe(8);
      expect(revisions).toEqual([...new Set(revisions)].sort((a, b) => a - b));
    });

    it("a listener that throws ends the watch with INTERNAL", async () => {
      const p = uniquePrefix("throws");
      const errors: string[] = [];
      const watch = await store.watch(p, {
        onEvents: () => {
          throw new Error("listener bug");
        },
        onError: (error) => errors.push(error.code),
      });
      await store.put(`${p}k`, bytes("v"));
      const reason = await watch.ended;
      expect(reason?.code).toBe("INTERNAL");
      expect(errors).toEqual(["INTERNAL"]);
    });

    it("watching from a compacted revision is COMPACTED; from the compaction revision it works", async () => {
      const { store: own, dispose } = await harness.openExclusive();
      try {
        const p = uniquePrefix("compacted");
        const early = (await own.put(`${p}a`, bytes("1"))).revision;
        await own.put(`${p}a`, bytes("2"));
        const late = (await own.put(`${p}a`, bytes("3"))).revision;
        await own.compact(late);
        await own.compact(late); // compacting again is a no-op
        const error = await rejection(own.watch(p, { afterRevision: early, onEvents: () => {} }), "COMPACTED");
        expect(error.details.map((d) => d.path)).toEqual(["afterRevision"]);
        const recorder = new WatchRecorder();
        const watch = await own.watch(p, { afterRevision: late - 1, onEvents: recorder.onEvents });
        await recorder.untilCount(1);
        await watch.cancel();
        expect(recorder.events.map(summary)).toEqual([`put ${p}a@${late}=3`]);
      } finally {
        await dispose();
      }
    });
  });
}
