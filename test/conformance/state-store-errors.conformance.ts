/**
 * Conformance: invalid arguments are typed errors naming each bad field, and nothing is half-written.
 */
import type { StateStore } from "@persys/controlplane";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bytes, paths, rejection, type StateStoreHarness, uniquePrefix } from "./state-store-helpers.js";

type Call = (store: StateStore, prefix: string) => Promise<unknown>;

export function describeArgumentErrors(harness: StateStoreHarness): void {
  describe("invalid arguments", () => {
    let store: StateStore;
    let prefix: string;
    beforeAll(async () => {
      store = await harness.open();
      prefix = uniquePrefix("invalid");
    });
    afterAll(() => store?.close());

    const loose = (value: unknown) => value as any;
    const invalidCases: [name: string, call: Call, fields: string[]][] = [
      ["get with an empty key", (s) => s.get(""), ["key"]],
      ["put with an empty key", (s) => s.put("", bytes("v")), ["key"]],
      ["put with a string value", (s, p) => s.put(`${p}k`, loose("text")), ["value"]],
      ["put with an empty key and no value", (s) => s.put("", loose(undefined)), ["key", "value"]],
      ["put with a malformed lease id", (s, p) => s.put(`${p}k`, bytes("v"), { lease: "abc" }), ["lease"]],
      ["put with a value over the size limit", (s, p) => s.put(`${p}k`, new Uint8Array(1024 * 1024 + 1)), ["value"]],
      ["range with limit 0", (s, p) => s.range(p, { limit: 0 }), ["limit"]],
      ["range with a negative limit", (s, p) => s.range(p, { limit: -5 }), ["limit"]],
      ["range with a fractional limit", (s, p) => s.range(p, { limit: 2.5 }), ["limit"]],
      ["range with a non-string prefix", (s) => s.range(loose(42)), ["prefix"]],
      ["delete with an empty key", (s) => s.delete(""), ["key"]],
      ["deletePrefix with an empty prefix", (s) => s.deletePrefix(""), ["prefix"]],
      ["grantLease with TTL 0", (s) => s.grantLease(0), ["ttl"]],
      ["grantLease with a negative TTL", (s) => s.grantLease(-10), ["ttl"]],
      ["grantLease with a fractional TTL", (s) => s.grantLease(1.5), ["ttl"]],
      ["keepAliveOnce with an empty lease id", (s) => s.keepAliveOnce(""), ["lease"]],
      ["revokeLease with a negative lease id", (s) => s.revokeLease("-3"), ["lease"]],
      [
        "watch from a negative revision",
        (s, p) => s.watch(p, { afterRevision: -1, onEvents: () => {} }),
        ["afterRevision"],
      ],
      ["watch without a listener", (s, p) => s.watch(p, loose({})), ["onEvents"]],
      ["compact to revision 0", (s) => s.compact(0), ["revision"]],
      [
        "txn with a bad compare target and operator",
        (s, p) => s.txn({ compare: [loose({ key: `${p}k`, target: "lease", op: "~", value: 1 })] }),
        ["compare[0].op", "compare[0].target"],
      ],
      [
        "txn comparing a revision with a string",
        (s, p) => s.txn({ compare: [loose({ key: `${p}k`, target: "version", op: "=", value: "1" })] }),
        ["compare[0].value"],
      ],
      [
        "txn with an unknown op type",
        (s, p) => s.txn({ success: [loose({ type: "increment", key: `${p}k` })] }),
        ["success[0].type"],
      ],
      [
        "txn putting one key twice",
        (s, p) => s.txn({ success: [1, 2].map((n) => ({ type: "put", key: `${p}dup`, value: bytes(String(n)) })) }),
        ["success[1].key"],
      ],
      [
        "txn putting and deleting (by prefix) the same key",
        (s, p) =>
          s.txn({
            failure: [
              { type: "delete", key: `${p}dir/`, prefix: true },
              { type: "put", key: `${p}dir/x`, value: bytes("x") },
            ],
          }),
        ["failure[1].key"],
      ],
      [
        "txn with more than 128 ops",
        (s, p) => s.txn({ success: Array.from({ length: 129 }, (_, i) => ({ type: "get", key: `${p}${i}` })) }),
        ["success"],
      ],
    ];

    it.each(invalidCases)("%s → INVALID_ARGUMENT naming %s", async (_name, call, fields) => {
      const error = await rejection(call(store, prefix), "INVALID_ARGUMENT");
      expect(paths(error).sort()).toEqual([...fields].sort());
      expect(error.retryable).toBe(false);
      for (const field of fields) expect(error.message).toContain(field);
    });

    it("a transaction with one bad op writes none of its good ones", async () => {
      const p = uniquePrefix("half-written");
      const before = await store.range(p);
      const error = await rejection(
        store.txn({
          success: [
            { type: "put", key: `${p}good-1`, value: bytes("1") },
            { type: "put", key: "", value: bytes("2") },
            { type: "put", key: `${p}good-3`, value: loose("not bytes") },
          ],
        }),
        "INVALID_ARGUMENT",
      );
      expect(paths(error)).toEqual(["success[1].key", "success[2].value"]);
      expect((await store.range(p)).kvs).toEqual(before.kvs);
    });

    it("a put with a well-formed but unknown lease is NOT_FOUND naming lease, and writes nothing", async () => {
      const key = `${uniquePrefix("unknown-lease")}k`;
      const error = await rejection(store.put(key, bytes("v"), { lease: "6999999999999999999" }), "NOT_FOUND");
      expect(paths(error)).toEqual(["lease"]);
      expect(await store.get(key)).toBeUndefined();
    });

    it("compacting to a future revision is INVALID_ARGUMENT naming revision", async () => {
      const current = await store.currentRevision();
      const error = await rejection(store.compact(current + 1_000_000), "INVALID_ARGUMENT");
      expect(paths(error)).toEqual(["revision"]);
    });

    it("a closed store rejects every call with UNAVAILABLE (not retryable); closing twice is fine", async () => {
      const closed = await harness.open();
      await closed.close();
      await closed.close();
      const error = await rejection(closed.get(`${prefix}k`), "UNAVAILABLE");
      expect(error.retryable).toBe(false);
      await rejection(closed.put(`${prefix}k`, bytes("v")), "UNAVAILABLE");
    });
  });
}
