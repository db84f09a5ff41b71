/**
 * Conformance: transactions (every compare target and operator, both branches, atomicity) and
 * compare-and-swap under concurrency.
 */
import type { Compare, StateStore } from "@persys/controlplane";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bytes, rejection, type StateStoreHarness, textOf, uniquePrefix } from "./state-store-helpers.js";

export function describeTransactions(harness: StateStoreHarness): void {
  describe("transactions", () => {
    let store: StateStore;
    let base: string;
    // The subject key: created at `created`, put again at `modified`; version 2; value "m".
    let created: number;
    let modified: number;
    beforeAll(async () => {
      store = await harness.open();
      base = uniquePrefix("txn");
      created = (await store.put(`${base}subject`, bytes("a"))).revision;
      modified = (await store.put(`${base}subject`, bytes("m"))).revision;
    });
    afterAll(() => store?.close());

    type Case = [name: string, holds: boolean, compare: () => Compare];
    const on = (key: string) => () => `${base}${key}`;
    const subject = on("subject");
    const absent = on("absent");
    const cases: Case[] = [
      [
        "modRevision = its mod revision",
        true,
        () => ({ key: subject(), target: "modRevision", op: "=", value: modified }),
      ],
      [
        "modRevision = an older revision",
        false,
        () => ({ key: subject(), target: "modRevision", op: "=", value: created }),
      ],
      [
        "modRevision != an older revision",
        true,
        () => ({ key: subject(), target: "modRevision", op: "!=", value: created }),
      ],
      [
        "modRevision < a later revision",
        true,
        () => ({ key: subject(), target: "modRevision", op: "<", value: modified + 1 }),
      ],
      [
        "modRevision > its own revision",
        false,
        () => ({ key: subject(), target: "modRevision", op: ">", value: modified }),
      ],
      [
        "createRevision = its create revision",
        true,
        () => ({ key: subject(), target: "createRevision", op: "=", value: created }),
      ],
      [
        "createRevision < its create revision",
        false,
        () => ({ key: subject(), target: "createRevision", op: "<", value: created }),
      ],
      [
        "createRevision > an earlier revision",
        true,
        () => ({ key: subject(), target: "createRevision", op: ">", value: created - 1 }),
      ],
      [
        "createRevision != its create revision",
        false,
        () => ({ key: subject(), target: "createRevision", op: "!=", value: created }),
      ],
      ["version = 2", true, () => ({ key: subject(), target: "version", op: "=", value: 2 })],
      ["version > 1", true, () => ({ key: subject(), target: "version", op: ">", value: 1 })],
      ["version < 2", false, () => ({ key: subject(), target: "version", op: "<", value: 2 })],
      ["version != 2", false, () => ({ key: subject(), target: "version", op: "!=", value: 2 })],
      ["value = its value", true, () => ({ key: subject(), target: "value", op: "=", value: bytes("m") })],
      ["value != its value", false, () => ({ key: subject(), target: "value", op: "!=", value: bytes("m") })],
      [
        "value < a greater value (bytes)",
        true,
        () => ({ key: subject(), target: "value", op: "<", value: bytes("n") }),
      ],
      [
        "value > a smaller value (bytes)",
        false,
        () => ({ key: subject(), target: "value", op: ">", value: bytes("ma") }),
      ],
      ["missing key: version = 0", true, () => ({ key: absent(), target: "version", op: "=", value: 0 })],
      ["missing key: createRevision = 0", true, () => ({ key: absent(), target: "createRevision", op: "=", value: 0 })],
      ["missing key: modRevision > 0", false, () => ({ key: absent(), target: "modRevision", op: ">", value: 0 })],
      [
        "missing key: value = empty is false",
        false,
        () => ({ key: absent(), target: "value", op: "=", value: bytes("") }),
      ],
      [
        "missing key: value != x is false too",
        false,
        () => ({ key: absent(), target: "value", op: "!=", value: bytes("x") }),
      ],
    ];

    it.each(cases)("compare %s holds: %s", async (_name, holds, compare) => {
      const marker = `${base}marker-${Math.random().toString(36).slice(2)}`;
      const result = await store.txn({
        compare: [compare()],
        success: [{ type: "put", key: marker, value: bytes("success") }],
        failure: [{ type: "get", key: subject() }],
      });
      expect(result.succeeded).toBe(holds);
      expect(textOf(await store.get(marker))).toBe(holds ? "success" : undefined);
      if (!holds) expect(result.results).toMatchObject([{ type: "get", kv: { key: subject(), version: 2 } }]);
    });

    it("every compare must hold; a failed compare runs the failure branch and writes nothing of success", async () => {
      const p = uniquePrefix("txn-branches");
      await store.put(`${p}a`, bytes("1"));
      const before = await store.get(`${p}a`);
      const result = await store.txn({
        compare: [
          { key: `${p}a`, target: "value", op: "=", value: bytes("1") },
          { key: `${p}a`, target: "version", op: "=", value: 7 },
        ],
        success: [
          { type: "put", key: `${p}a`, value: bytes("2") },
          { type: "put", key: `${p}b`, value: bytes("2") },
        ],
        failure: [
          { type: "get", key: `${p}a` },
          { type: "get", key: `${p}nothing` },
        ],
      });
      expect(result.succeeded).toBe(false);
      expect(result.results).toEqual([
        { type: "get", kv: before },
        { type: "get", kv: undefined },
      ]);
      expect(await store.get(`${p}a`)).toEqual(before);
      expect(await store.get(`${p}b`)).toBeUndefined();
    });

    it("a transaction's writes share one revision, apply in order, and its reads see them", async () => {
      const p = uniquePrefix("txn-atomic");
      await store.put(`${p}old/1`, bytes("x"));
      await store.put(`${p}old/2`, bytes("y"));
      const result = await store.txn({
        compare: [{ key: `${p}new`, target: "version", op: "=", value: 0 }],
        success: [
          { type: "put", key: `${p}new`, value: bytes("created") },
          { type: "get", key: `${p}new` },
          { type: "delete", key: `${p}old/`, prefix: true, prevKv: true },
          { type: "put", key: `${p}other`, value: bytes("z"), prevKv: true },
        ],
      });
      expect(result.succeeded).toBe(true);
      const [put, get, del, put2] = result.results;
      expect(put).toEqual({ type: "put", revision: result.revision });
      expect(get).toMatchObject({ type: "get", kv: { key: `${p}new`, modRevision: result.revision, version: 1 } });
      expect(del).toMatchObject({ type: "delete", deleted: 2 });
      expect(del?.type === "delete" && del.prevKvs?.map((kv) => kv.key)).toEqual([`${p}old/1`, `${p}old/2`]);
      expect(put2).toEqual({ type: "put", revision: result.revision });
      const after = await store.range(p);
      expect(after.kvs.map((kv) => [kv.key.slice(p.length), kv.modRevision])).toEqual([
        ["new", result.revision],
        ["other", result.revision],
      ]);
      // The same create-if-absent transaction now fails: the key exists.
      const again = await store.txn({
        compare: [{ key: `${p}new`, target: "version", op: "=", value: 0 }],
        success: [{ type: "put", key: `${p}new`, value: bytes("overwritten") }],
      });
      expect(again.succeeded).toBe(false);
      expect(textOf(await store.get(`${p}new`))).toBe("created");
    });

    it("a read-only or empty transaction succeeds without writing", async () => {
      const p = uniquePrefix("txn-empty");
      const { revision } = await store.put(`${p}k`, bytes("v"));
      const empty = await store.txn({});
      expect(empty).toMatchObject({ succeeded: true, results: [] });
      expect(empty.revision).toBeGreaterThanOrEqual(revision);
      expect((await store.get(`${p}k`))?.modRevision).toBe(revision);
    });

    it("an op that fails inside a transaction (unknown lease) fails it whole: nothing written", async () => {
      const p = uniquePrefix("txn-lease");
      const error = await rejection(
        store.txn({
          success: [
            { type: "put", key: `${p}first`, value: bytes("1") },
            { type: "put", key: `${p}second`, value: bytes("2"), lease: "7000000000000000001" },
          ],
        }),
        "NOT_FOUND",
      );
      expect(error.details.map((d) => d.path)).toEqual(["success[1].lease"]);
      expect((await store.range(p)).kvs).toEqual([]);
    });

    it("compare-and-swap: 20 concurrent writers incrementing one counter lose no update", async () => {
      const key = `${uniquePrefix("cas")}counter`;
      await store.put(key, bytes("0"));
      const writers = 20;
      const perWriter = 5;
      let conflicts = 0;
      const increment = async () => {
        for (;;) {
          const current = await store.get(key);
          const next = Number(textOf(current)) + 1;
          const result = await store.txn({
            compare: [{ key, target: "modRevision", op: "=", value: current!.modRevision }],
            success: [{ type: "put", key, value: bytes(String(next)) }],
          });
          if (result.succeeded) return;
          conflicts++;
        }
      };
      await Promise.all(
        Array.from({ length: writers }, async () => {
          for (let i = 0; i < perWriter; i++) await increment();
        }),
      );
      const final = await store.get(key);
      expect(Number(textOf(final))).toBe(writers * perWriter);
      expect(final?.version).toBe(writers * perWriter + 1);
      // The writers really raced: some compares failed and were retried.
      expect(conflicts).toBeGreaterThan(0);
    });
  });
}
