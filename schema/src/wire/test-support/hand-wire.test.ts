import { describe, expect, it } from "vitest";
import {
  concat,
  doubleField,
  hex,
  mapEntry,
  messageField,
  stringField,
  timestampField,
  varint,
  varintField,
} from "./hand-wire.js";

// Known encodings from the protobuf encoding guide and the two's-complement rule, so the fixture
// encoder is checked against the spec and not against our generated code.
describe("hand-wire encoder", () => {
  const cases: { name: string; bytes: Uint8Array; hex: string }[] = [
    { name: "varint 1", bytes: varint(1), hex: "01" },
    { name: "varint 150 (two bytes)", bytes: varint(150), hex: "9601" },
    { name: "varint 2^32 (int64 beyond uint32)", bytes: varint(2 ** 32), hex: "8080808010" },
    { name: "varint -1 as int64 (ten bytes)", bytes: varint(-1), hex: "ffffffffffffffffff01" },
    { name: "field 1 varint 150", bytes: varintField(1, 150), hex: "089601" },
    { name: "field 3 bool true", bytes: varintField(3, true), hex: "1801" },
    { name: 'field 2 string "testing"', bytes: stringField(2, "testing"), hex: "120774657374696e67" },
    { name: "field 3 embedded {1: 150}", bytes: messageField(3, varintField(1, 150)), hex: "1a03089601" },
    { name: "field 1 double 1.0", bytes: doubleField(1, 1), hex: "09000000000000f03f" },
    { name: "field 20 map entry (two-byte tag)", bytes: mapEntry(20, "k", "v"), hex: "a201060a016b120176" },
    { name: "timestamp omits zero nanos", bytes: timestampField(7, 1), hex: "3a020801" },
    { name: "timestamp with nanos", bytes: timestampField(7, 1, 5), hex: "3a0408011005" },
    { name: "concat keeps order", bytes: concat(varintField(1, 1), varintField(2, 2)), hex: "08011002" },
  ];

  it.each(cases)("$name", ({ bytes, hex: expected }) => {
    expect(hex(bytes)).toBe(expected);
  });
});
