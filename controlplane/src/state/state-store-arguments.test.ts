import { PersysError } from "@persys/schema";
import { describe, expect, it } from "vitest";
import type { TxnRequest } from "./state-store.js";
import { putArguments, rangeArguments, ttlArgument, txnArguments } from "./state-store-arguments.js";

function fields(check: () => void): string[] {
  try {
    check();
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(PersysError);
    expect((error as PersysError).code).toBe("INVALID_ARGUMENT");
    return (error as PersysError).details.map((d) => d.path);
  }
}

const v = Buffer.from("v");

describe("state store argument checks", () => {
  it.each([
    ["the largest int64 lease id", "9223372036854775807", []],
    ["one past the largest int64", "9223372036854775808", ["lease"]],
    ["a lease id with a leading zero", "012", ["lease"]],
    ["lease id 0 (etcd's 'no lease')", "0", ["lease"]],
  ])("put with %s", (_name, lease, expected) => {
    expect(fields(() => putArguments("k", v, { lease }))).toEqual(expected);
  });

  it.each([
    ["a key of 4096 bytes", "k".repeat(4096), []],
    ["a key of 4097 bytes", "k".repeat(4097), ["key"]],
  ])("put with %s", (_name, key, expected) => {
    expect(fields(() => putArguments(key, v, undefined))).toEqual(expected);
  });

  it.each([
    ["limit 1", { limit: 1 }, []],
    ["limit NaN", { limit: Number.NaN }, ["limit"]],
    ["a non-string startAfter", { startAfter: 3 as unknown as string }, ["startAfter"]],
    ["a non-boolean keysOnly", { keysOnly: "yes" as unknown as boolean }, ["keysOnly"]],
  ])("range with %s", (_name, options, expected) => {
    expect(fields(() => rangeArguments("p/", options))).toEqual(expected);
  });

  it.each([
    ["1 s", 1, []],
    ["9e9 s (etcd's maximum)", 9_000_000_000, []],
    ["one more than the maximum", 9_000_000_001, ["ttl"]],
    ["a string", "5" as unknown as number, ["ttl"]],
  ])("ttl of %s", (_name, ttl, expected) => {
    expect(fields(() => ttlArgument(ttl))).toEqual(expected);
  });

  const put = (key: string) => ({ type: "put" as const, key, value: v });
  it.each<[string, TxnRequest, string[]]>([
    ["a put and a get of the same key", { success: [put("a"), { type: "get", key: "a" }] }, []],
    [
      "two deletes of the same key",
      {
        success: [
          { type: "delete", key: "a" },
          { type: "delete", key: "a" },
        ],
      },
      [],
    ],
    ["the same key put in different branches", { success: [put("a")], failure: [put("a")] }, []],
    ["a put then a delete of the same key", { success: [put("a"), { type: "delete", key: "a" }] }, ["success[0].key"]],
    [
      "a put under a deleted prefix",
      { success: [{ type: "delete", key: "d/", prefix: true }, put("d/x")] },
      ["success[1].key"],
    ],
    ["a put beside a deleted prefix", { success: [{ type: "delete", key: "d/", prefix: true }, put("d0")] }, []],
    ["a non-array success", { success: {} as unknown as [] }, ["success"]],
    ["128 ops", { success: Array.from({ length: 128 }, (_, i) => put(`k${i}`)) }, []],
  ])("txn with %s", (_name, request, expected) => {
    expect(fields(() => txnArguments(request))).toEqual(expected);
  });

  it("a txn that is not an object names request", () => {
    expect(fields(() => txnArguments(null as unknown as TxnRequest))).toEqual(["request"]);
  });
});
