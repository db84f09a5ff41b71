import { describe, expect, it } from "vitest";
import { decodeRecord, encodeRecord } from "./records.js";

describe("record encoding", () => {
  it("hands back the record it wrote when the same bytes come back once, then parses", () => {
    const written = { workloadId: "web", index: 0, nodeId: "n1", placedAt: "2026-12-03T09:00:00.000Z" };
    const bytes = encodeRecord(written);
    const echoed = Buffer.from(Buffer.from(bytes).toString("utf8"), "utf8"); // another buffer, as from the watch
    expect(decodeRecord(echoed)).toBe(written);
    const again = decodeRecord<typeof written>(echoed);
    expect(again).not.toBe(written);
    expect(again).toEqual(written);
  });

  it("parses bytes it did not write, and refuses what is not JSON naming the value", () => {
    expect(decodeRecord(Buffer.from('{"nodeId":"n2"}'))).toEqual({ nodeId: "n2" });
    expect(() => decodeRecord(Buffer.from("{nope"))).toThrow(/value: is not JSON/);
  });

  it("keeps a bounded memory of what it wrote: the oldest is forgotten first", () => {
    const first = { n: -1 };
    const bytes = encodeRecord(first);
    for (let n = 0; n < 10_000; n++) encodeRecord({ n });
    const decoded = decodeRecord(bytes);
    expect(decoded).toEqual(first);
    expect(decoded).not.toBe(first);
  });
});
