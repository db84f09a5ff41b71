import { describe, expect, it } from "vitest";
import { hasPrefix, prefixEnd, prefixRange } from "./key-range.js";

const b = (...bytes: number[]) => Buffer.from(bytes);

describe("prefixEnd", () => {
  it.each([
    ["a plain prefix increments its last byte", Buffer.from("ab"), Buffer.from("ac")],
    ["trailing 0xff bytes are dropped before incrementing", b(0x61, 0xff, 0xff), b(0x62)],
    ["a prefix of only 0xff has no end", b(0xff, 0xff), undefined],
    ["the empty prefix has no end", Buffer.alloc(0), undefined],
    ["a multi-byte UTF-8 character increments its last byte", Buffer.from("é"), b(0xc3, 0xaa)],
  ])("%s", (_name, prefix, end) => {
    expect(prefixEnd(prefix)).toEqual(end);
  });
});

describe("prefixRange", () => {
  const p = Buffer.from("p/");
  it.each([
    ["no startAfter starts at the prefix", undefined, "p/", false],
    ["startAfter inside the prefix starts right after it", "p/m", "p/m\0", false],
    ["startAfter before the prefix starts at the prefix", "a", "p/", false],
    ["startAfter past the prefix is empty", "q", "q\0", true],
  ])("%s", (_name, startAfter, start, empty) => {
    const range = prefixRange(p, startAfter === undefined ? undefined : Buffer.from(startAfter));
    expect([range.start.toString(), range.end?.toString(), range.empty]).toEqual([start, "p0", empty]);
  });
});

describe("hasPrefix", () => {
  it.each([
    ["p/a", "p/", true],
    ["p/", "p/", true],
    ["p0", "p/", false],
    ["p", "p/", false],
    ["anything", "", true],
  ])("%s has prefix %s: %s", (key, prefix, expected) => {
    expect(hasPrefix(Buffer.from(key), Buffer.from(prefix))).toBe(expected);
  });
});
