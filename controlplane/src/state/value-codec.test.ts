import { PersysError } from "@persys/schema";
import { describe, expect, it } from "vitest";
import { decodeJson, decodeText, encodeJson, encodeText } from "./value-codec.js";

describe("value codec", () => {
  it.each([
    ["an object", { replicas: 2, labels: { a: "b" } }],
    ["an array", [1, "two", null]],
    ["a string with non-ASCII text", "é✓"],
    ["null", null],
  ])("round-trips %s through JSON bytes", (_name, value) => {
    expect(decodeJson(encodeJson(value))).toEqual(value);
  });

  it.each([
    ["undefined", undefined],
    ["a function", () => 1],
    ["a bigint", 1n],
  ])("refuses to encode %s, naming value", (_name, value) => {
    const error = (() => {
      try {
        encodeJson(value);
      } catch (e) {
        return e;
      }
    })() as PersysError;
    expect(error).toBeInstanceOf(PersysError);
    expect([error.code, error.details[0]?.path]).toEqual(["INVALID_ARGUMENT", "value"]);
  });

  it("decodeJson of bytes that are not JSON is INVALID_ARGUMENT naming value", () => {
    expect(() => decodeJson(encodeText("{nope"))).toThrow(/value: is not JSON/);
  });

  it("text round-trips as UTF-8", () => {
    expect([...encodeText("é")]).toEqual([0xc3, 0xa9]);
    expect(decodeText(Uint8Array.from([0x68, 0x69]))).toBe("hi");
  });
});
