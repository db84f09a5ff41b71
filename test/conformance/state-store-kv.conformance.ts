/**
 * Conformance: keys, values and revisions; prefix ranges with paging; deletes.
 */
import { decodeJson, encodeJson, type StateStore } from "@persys/controlplane";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bytes, type StateStoreHarness, textOf, uniquePrefix } from "./state-store-helpers.js";

export function describeKeyValues(harness: StateStoreHarness): void {
  describe("keys, values and revisions", () => {
    let store: StateStore;
    beforeAll(async () => {
      store = await harness.open();
    });
    afterAll(() => store?.close());

    it("put creates a key at a new revision with version 1; a second put keeps createRevision", async () => {
      const key = `${uniquePrefix("put")}k`;
      const before = await store.currentRevision();
      const first = await store.put(key, bytes("one"));
      expect(first.revision).toBeGreaterThan(before);
      expect(await store.get(key)).toMatchObject({
        key,
        createRevision: first.revision,
        modRevision: first.revision,
        version: 1,
      });
      const second = await store.put(key, bytes("two"), { prevKv: true });
      expect(second.revision).toBeGreaterThan(first.revision);
      expect(second.prevKv).toMatchObject({ key, modRevision: first.revision, version: 1 });
      expect(textOf(second.prevKv)).toBe("one");
      const now = await store.get(key);
      expect(now).toMatchObject({ createRevision: first.revision, modRevision: second.revision, version: 2 });
      expect(textOf(now)).toBe("two");
      expect(now?.lease).toBeUndefined();
      expect(await store.currentRevision()).toBeGreaterThanOrEqual(second.revision);
    });

    it("get of a missing key is undefined; a put without prevKv returns none", async () => {
      const key = `${uniquePrefix("missing")}k`;
      expect(await store.get(key)).toBeUndefined();
      expect((await store.put(key, bytes("x"))).prevKv).toBeUndefined();
    });

    it("values are bytes: binary values and JSON round-trip unchanged", async () => {
      const prefix = uniquePrefix("bytes");
      const binary = Uint8Array.from([0, 255, 1, 254, 0, 10, 13]);
      await store.put(`${prefix}bin`, binary);
      expect([...((await store.get(`${prefix}bin`))?.value ?? [])]).toEqual([...binary]);
      const doc = { replicas: 3, labels: { tier: "web" }, ports: [80, 443], note: "é✓" };
      await store.put(`${prefix}json`, encodeJson(doc));
      expect(decodeJson((await store.get(`${prefix}json`))!.value)).toEqual(doc);
      await store.put(`${prefix}empty`, new Uint8Array(0));
      expect((await store.get(`${prefix}empty`))?.value.length).toBe(0);
    });

    it("delete removes the key at a new revision; deleting it again deletes nothing", async () => {
      const key = `${uniquePrefix("delete")}k`;
      const put = await store.put(key, bytes("v"));
      const deleted = await store.delete(key, { prevKv: true });
      expect(deleted.deleted).toBe(1);
      expect(deleted.revision).toBeGreaterThan(put.revision);
      expect(deleted.prevKvs?.map((kv) => [kv.key, textOf(kv)])).toEqual([[key, "v"]]);
      expect(await store.get(key)).toBeUndefined();
      const again = await store.delete(key);
      expect(again.deleted).toBe(0);
      expect(again.revision).toBeGreaterThanOrEqual(deleted.revision);
      // A re-created key starts over: new createRevision, version 1.
      const recreated = await store.put(key, bytes("w"));
      expect(await store.get(key)).toMatchObject({ createRevision: recreated.revision, version: 1 });
    });

    it("deletePrefix deletes exactly the keys under the prefix, in one revision", async () => {
      const base = uniquePrefix("delete-prefix");
      for (const k of ["p/a", "p/b", "p/c/d", "p0", "q"]) await store.put(base + k, bytes(k));
      const result = await store.deletePrefix(`${base}p/`, { prevKv: true });
      expect(result.deleted).toBe(3);
      expect(result.prevKvs?.map((kv) => kv.key)).toEqual([`${base}p/a`, `${base}p/b`, `${base}p/c/d`]);
      const left = await store.range(base);
      expect(left.kvs.map((kv) => kv.key)).toEqual([`${base}p0`, `${base}q`]);
      expect((await store.deletePrefix(`${base}p/`)).deleted).toBe(0);
    });

    it("range returns the prefix's keys in byte order with metadata; keysOnly leaves values empty", async () => {
      const base = uniquePrefix("range");
      const names = ["b", "a", "Z", "é", "a/b", "a0"];
      const revisions = new Map<string, number>();
      for (const n of names) revisions.set(n, (await store.put(base + n, bytes(`v-${n}`))).revision);
      await store.put(`${base.slice(0, -1)}X`, bytes("sibling outside the prefix"));
      const all = await store.range(base);
      // Byte order of UTF-8: "Z" (0x5a) < "a" < "a/b" < "a0" < "b" < "é" (0xc3 0xa9).
      expect(all.kvs.map((kv) => kv.key.slice(base.length))).toEqual(["Z", "a", "a/b", "a0", "b", "é"]);
      expect(all.count).toBe(6);
      expect(all.more).toBe(false);
      expect(all.revision).toBeGreaterThanOrEqual(revisions.get("a0")!);
      for (const kv of all.kvs) {
        const n = kv.key.slice(base.length);
        expect(kv).toMatchObject({ modRevision: revisions.get(n), createRevision: revisions.get(n), version: 1 });
        expect(textOf(kv)).toBe(`v-${n}`);
      }
      const keysOnly = await store.range(base, { keysOnly: true });
      expect(keysOnly.kvs.map((kv) => [kv.key, kv.value.length, kv.version])).toEqual(
        all.kvs.map((kv) => [kv.key, 0, 1]),
      );
      expect((await store.range(`${base}nothing-here/`)).kvs).toEqual([]);
    });

    it("range pages with limit and startAfter: every key exactly once, with count and more", async () => {
      const base = uniquePrefix("paging");
      const keys = Array.from({ length: 25 }, (_, i) => `${base}item-${String(i).padStart(3, "0")}`);
      await Promise.all(keys.map((k) => store.put(k, bytes(k))));
      const pages: { keys: string[]; more: boolean; count: number }[] = [];
      let startAfter: string | undefined;
      for (;;) {
        const page = await store.range(base, { limit: 10, ...(startAfter ? { startAfter } : {}) });
        pages.push({ keys: page.kvs.map((kv) => kv.key), more: page.more, count: page.count });
        if (!page.more) break;
        startAfter = page.kvs.at(-1)!.key;
      }
      expect(pages.map((p) => [p.keys.length, p.more, p.count])).toEqual([
        [10, true, 25],
        [10, true, 15],
        [5, false, 5],
      ]);
      expect(pages.flatMap((p) => p.keys)).toEqual(keys);
      // startAfter before the prefix starts at the prefix; after its end, nothing.
      expect((await store.range(base, { startAfter: "" })).count).toBe(25);
      expect((await store.range(base, { startAfter: `${base}zzz` })).kvs).toEqual([]);
      expect((await store.range(base, { limit: 25 })).more).toBe(false);
    });
  });
}
