import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  compareEventIds,
  eventIdTime,
  formatEventId,
  MAX_SEQ,
  nextIdParts,
  parseEventId,
  previousIdParts,
} from "./event-id.js";

describe("event ids", () => {
  it.each([
    { id: "0-0", parts: { ms: 0, seq: 0 } },
    { id: "1700000000000-0", parts: { ms: 1_700_000_000_000, seq: 0 } },
    { id: "1700000000000-42", parts: { ms: 1_700_000_000_000, seq: 42 } },
  ])("parses $id", ({ id, parts }) => {
    expect(parseEventId(id)).toEqual(parts);
    expect(formatEventId(parts)).toBe(id);
  });

  it.each(["", "1", "1-", "-1", "1-2-3", "a-1", "1.5-0", " 1-0", "99999999999999999-0", 12])("rejects %j", (id) => {
    expect(parseEventId(id)).toBeUndefined();
  });

  it.each([
    { a: "5-9", b: "5-10", sign: -1, why: "sequence compares as a number, not as text" },
    { a: "10-0", b: "9-99", sign: 1, why: "time comes first" },
    { a: "7-3", b: "7-3", sign: 0, why: "equal" },
  ])("orders $a vs $b: $why", ({ a, b, sign }) => {
    expect(Math.sign(compareEventIds(a, b))).toBe(sign);
  });

  it("orders like the (ms, seq) pair, and next/previous are the neighbours", () => {
    const parts = fc.record({ ms: fc.integer({ min: 0, max: 2 ** 45 }), seq: fc.integer({ min: 0, max: 2 ** 40 }) });
    fc.assert(
      fc.property(parts, parts, (a, b) => {
        const expected = Math.sign(a.ms - b.ms || a.seq - b.seq);
        expect(Math.sign(compareEventIds(formatEventId(a), formatEventId(b)))).toBe(expected);
        const next = nextIdParts(a);
        expect(compareEventIds(formatEventId(next), formatEventId(a))).toBeGreaterThan(0);
        const previous = previousIdParts(next);
        expect(previous).toEqual(a);
      }),
    );
  });

  it("steps over millisecond boundaries", () => {
    expect(previousIdParts({ ms: 5, seq: 0 })).toEqual({ ms: 4, seq: MAX_SEQ });
    expect(previousIdParts({ ms: 0, seq: 0 })).toBeUndefined();
    expect(nextIdParts({ ms: 5, seq: MAX_SEQ })).toEqual({ ms: 6, seq: 0 });
  });

  it("throws a TypeError instead of misordering a malformed id", () => {
    expect(() => compareEventIds("1-0", "soon")).toThrow(TypeError);
    expect(() => eventIdTime("soon")).toThrow("not an event id: soon");
    expect(eventIdTime("1700000000123-4")).toBe(1_700_000_000_123);
  });
});
