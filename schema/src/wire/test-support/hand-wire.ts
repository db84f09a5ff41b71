/**
 * A tiny, independent protobuf wire encoder for tests. It knows nothing of our generated code: test
 * fixtures are written with it from the field numbers of the wire-contract fact sheet, then decoded
 * with the generated code (or compared against what the generated encoder writes).
 *
 * Records are built in the order given; callers write fields in field-number order, as Go's encoder
 * does, and omit default values the way proto3 implicit presence does.
 *
 * ```ts
 * const bytes = concat(stringField(1, "node-a"), messageField(2, varintField(1, 16000)));
 * ```
 */

/** Protobuf wire types (the low three bits of a tag). */
export const WireType = { VARINT: 0, I64: 1, LEN: 2, I32: 5 } as const;
export type WireType = (typeof WireType)[keyof typeof WireType];

const UINT64_MASK = (1n << 64n) - 1n;

/** Base-128 varint of a 64-bit value; negative numbers are written as 64-bit two's complement (10 bytes). */
export function varint(value: number | bigint): Uint8Array {
  let rest = BigInt(value) & UINT64_MASK;
  const out: number[] = [];
  do {
    const low = Number(rest & 0x7fn);
    rest >>= 7n;
    out.push(rest > 0n ? low | 0x80 : low);
  } while (rest > 0n);
  return Uint8Array.from(out);
}

/** The key of a record: field number << 3 | wire type, as a varint. */
export function tag(field: number, wireType: WireType): Uint8Array {
  return varint((BigInt(field) << 3n) | BigInt(wireType));
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** VARINT record: int32, int64, uint32, bool and enum fields. */
export function varintField(field: number, value: number | bigint | boolean): Uint8Array {
  return concat(tag(field, WireType.VARINT), varint(typeof value === "boolean" ? Number(value) : value));
}

/** LEN record holding raw bytes. */
export function bytesField(field: number, payload: Uint8Array): Uint8Array {
  return concat(tag(field, WireType.LEN), varint(payload.length), payload);
}

/** LEN record holding UTF-8 text. One call per element for repeated strings. */
export function stringField(field: number, value: string): Uint8Array {
  return bytesField(field, new TextEncoder().encode(value));
}

/** LEN record holding an embedded message made of the given records. */
export function messageField(field: number, ...records: Uint8Array[]): Uint8Array {
  return bytesField(field, concat(...records));
}

/** I64 record holding a little-endian IEEE-754 double. */
export function doubleField(field: number, value: number): Uint8Array {
  const payload = new Uint8Array(8);
  new DataView(payload.buffer).setFloat64(0, value, true);
  return concat(tag(field, WireType.I64), payload);
}

/** One entry of a map<string, string> field: a LEN record with key = 1 and value = 2. */
export function mapEntry(field: number, key: string, value: string): Uint8Array {
  return messageField(field, stringField(1, key), stringField(2, value));
}

/** A google.protobuf.Timestamp record (seconds = 1, nanos = 2); zero parts are omitted. */
export function timestampField(field: number, seconds: number, nanos = 0): Uint8Array {
  return messageField(
    field,
    seconds === 0 ? new Uint8Array() : varintField(1, seconds),
    nanos === 0 ? new Uint8Array() : varintField(2, nanos),
  );
}

/** Lowercase hex, for readable assertion failures. */
export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("hex");
}
