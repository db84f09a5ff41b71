import type { FieldInfo, SchemaCatalog } from "../json-schemas.js";

const TIMESTAMP = "google.protobuf.Timestamp";
const INT64 = new Set(["int64", "uint64", "sint64", "fixed64", "sfixed64"]);
const INT32 = new Set(["int32", "sint32", "sfixed32", "uint32", "fixed32"]);
const UNSIGNED = new Set(["uint32", "fixed32", "uint64", "fixed64"]);

/** A body that protojson would refuse; the message reads like Go's (`invalid value for ...`). */
export class ProtoJsonError extends Error {
  override readonly name = "ProtoJsonError";
}

/**
 * Go `protojson.Marshal` with `UseProtoNames: true` applied to ts-proto `toJSON` output: proto field
 * names (snake_case; map keys unchanged), 64-bit integers as strings, Timestamps as RFC 3339 UTC
 * with 0 or 3 fractional digits, non-finite doubles as "NaN"/"Infinity"/"-Infinity". Defaults are
 * already omitted by `toJSON`. Keys the field index does not know are dropped.
 *
 * @throws Error when `message` is not in the field index.
 */
export function toProtoNames(catalog: SchemaCatalog, message: string, json: unknown): Record<string, unknown> {
  const fields = fieldsOf(catalog, message);
  const source = (json ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const field of fields) {
    const value = source[field.jsonName];
    if (value === undefined || value === null) continue;
    out[field.name] = encodeField(catalog, field, value);
  }
  return out;
}

function encodeField(catalog: SchemaCatalog, field: FieldInfo, value: unknown): unknown {
  if (field.type === "map") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      out[key] = encodeValue(catalog, field.value ?? "string", field.valueRef, item);
    }
    return out;
  }
  if (field.repeated) return (value as unknown[]).map((item) => encodeValue(catalog, field.type, field.typeRef, item));
  return encodeValue(catalog, field.type, field.typeRef, value);
}

function encodeValue(catalog: SchemaCatalog, type: string, ref: string | undefined, value: unknown): unknown {
  if (type === "message") {
    if (ref === TIMESTAMP) return typeof value === "string" ? value.replace(/\.000Z$/, "Z") : value;
    return toProtoNames(catalog, ref ?? "", value);
  }
  if (INT64.has(type)) return String(value);
  if ((type === "double" || type === "float") && typeof value === "number" && !Number.isFinite(value)) {
    return Number.isNaN(value) ? "NaN" : value > 0 ? "Infinity" : "-Infinity";
  }
  return value;
}

/**
 * Go `protojson.Unmarshal` with `DiscardUnknown: true`: accepts proto names and JSON names, skips
 * unknown keys (and unknown enum names), treats `null` as unset, and refuses wrong types, integers
 * out of range, bad timestamps and a oneof set twice. Returns the message's proto3 JSON with JSON
 * names, ready for ts-proto `fromJSON`.
 *
 * @throws ProtoJsonError naming the offending field (proto name).
 */
export function fromProtoJson(catalog: SchemaCatalog, message: string, input: unknown): Record<string, unknown> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new ProtoJsonError(`invalid value for message ${message}: ${show(input)}`);
  }
  const fields = fieldsOf(catalog, message);
  const out: Record<string, unknown> = {};
  const seen = new Map<string, string>();
  const oneofs = new Map<string, string>();
  for (const [key, value] of Object.entries(input)) {
    const field = fields.find((f) => f.jsonName === key || f.name === key);
    if (!field) continue;
    if (seen.has(field.name)) throw new ProtoJsonError(`duplicate field ${field.name}`);
    seen.set(field.name, key);
    if (value === null) continue;
    if (field.oneof) {
      const other = oneofs.get(field.oneof);
      if (other)
        throw new ProtoJsonError(`error parsing ${field.name}, oneof ${field.oneof} is already set (${other})`);
      oneofs.set(field.oneof, field.name);
    }
    const decoded = decodeField(catalog, field, value);
    if (decoded !== undefined) out[field.jsonName] = decoded;
  }
  return out;
}

function decodeField(catalog: SchemaCatalog, field: FieldInfo, value: unknown): unknown {
  if (field.type === "map") {
    if (typeof value !== "object" || Array.isArray(value)) throw invalidValue("map", field, value);
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      if (item === null) throw invalidValue(field.value ?? "value", field, item);
      const decoded = decodeValue(catalog, field.value ?? "string", field.valueRef, field, item);
      if (decoded !== undefined) out[key] = decoded;
    }
    return out;
  }
  if (field.repeated) {
    if (!Array.isArray(value)) throw invalidValue("list", field, value);
    return value
      .map((item) => decodeValue(catalog, field.type, field.typeRef, field, item))
      .filter((item) => item !== undefined);
  }
  return decodeValue(catalog, field.type, field.typeRef, field, value);
}

function decodeValue(
  catalog: SchemaCatalog,
  type: string,
  ref: string | undefined,
  field: FieldInfo,
  value: unknown,
): unknown {
  switch (type) {
    case "message":
      if (ref === TIMESTAMP) return decodeTimestamp(field, value);
      if (typeof value !== "object" || value === null || Array.isArray(value))
        throw invalidValue("message", field, value);
      return fromProtoJson(catalog, ref ?? "", value);
    case "enum":
      return decodeEnum(catalog, ref ?? "", field, value);
    case "string":
      if (typeof value !== "string") throw invalidValue(type, field, value);
      return value;
    case "bool":
      if (typeof value !== "boolean") throw invalidValue(type, field, value);
      return value;
    case "bytes":
      if (typeof value !== "string" || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(value)) throw invalidValue(type, field, value);
      return value;
    case "double":
    case "float":
      return decodeFloat(type, field, value);
    default:
      return decodeInteger(type, field, value);
  }
}

function decodeInteger(type: string, field: FieldInfo, value: unknown): number | string {
  const text = typeof value === "number" ? String(value) : typeof value === "string" ? value.trim() : undefined;
  if (text === undefined || !/^-?\d+$/.test(text)) throw invalidValue(type, field, value);
  if (UNSIGNED.has(type) && text.startsWith("-")) throw invalidValue(type, field, value);
  if (INT32.has(type)) {
    const n = Number(text);
    const [min, max] = UNSIGNED.has(type) ? [0, 4294967295] : [-2147483648, 2147483647];
    if (n < min || n > max) throw invalidValue(type, field, value);
    return n;
  }
  return text;
}

function decodeFloat(type: string, field: FieldInfo, value: unknown): number {
  if (typeof value === "number") return value;
  if (value === "NaN") return Number.NaN;
  if (value === "Infinity") return Number.POSITIVE_INFINITY;
  if (value === "-Infinity") return Number.NEGATIVE_INFINITY;
  if (typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value))) return Number(value);
  throw invalidValue(type, field, value);
}

/** Enum values are numbered 0, 1, 2, ... in declaration order in every Persys proto, so a number indexes the names. */
function decodeEnum(
  catalog: SchemaCatalog,
  ref: string,
  field: FieldInfo,
  value: unknown,
): string | number | undefined {
  const names = catalog.enums[ref] ?? [];
  if (typeof value === "string") return names.includes(value) ? value : undefined;
  if (typeof value === "number" && Number.isInteger(value)) return names[value] === undefined ? undefined : value;
  throw invalidValue("enum", field, value);
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

function decodeTimestamp(field: FieldInfo, value: unknown): string {
  if (typeof value !== "string" || !RFC3339.test(value) || Number.isNaN(Date.parse(value))) {
    throw invalidValue("google.protobuf.Timestamp", field, value);
  }
  return value;
}

function invalidValue(type: string, field: FieldInfo, value: unknown): ProtoJsonError {
  return new ProtoJsonError(`invalid value for ${type} field ${field.name}: ${show(value)}`);
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function fieldsOf(catalog: SchemaCatalog, message: string): readonly FieldInfo[] {
  const fields = catalog.messages[message];
  if (!fields) throw new Error(`no field index for ${message}`);
  return fields;
}
