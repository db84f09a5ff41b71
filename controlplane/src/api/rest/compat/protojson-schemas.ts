import type { FieldInfo, JsonSchema, SchemaCatalog } from "../json-schemas.js";

const TIMESTAMP = "google.protobuf.Timestamp";
const INT64 = new Set(["int64", "uint64", "sint64", "fixed64", "sfixed64"]);

/** `$id` of the protojson (proto names) form of a message. */
export function protoNameSchemaId(message: string): string {
  return `${message}.protojson.json`;
}

/**
 * JSON Schemas of messages as Go's protojson writes them with `UseProtoNames` (snake_case keys,
 * 64-bit integers as strings), for documenting the compat routes' responses. Derived from the field
 * index and the generated schemas (for descriptions), for `roots` and every message they reach.
 * Unknown keys are allowed: Go clients read them with `DiscardUnknown`.
 */
export function protoNameSchemas(catalog: SchemaCatalog, roots: readonly string[]): JsonSchema[] {
  const out = new Map<string, JsonSchema>();
  const pending = [...roots];
  while (pending.length > 0) {
    const message = pending.pop() as string;
    if (out.has(message)) continue;
    const fields = catalog.messages[message];
    if (!fields) throw new Error(`no field index for ${message}`);
    const described = (catalog.schemas.get(`${message}.json`)?.properties ?? {}) as Record<string, JsonSchema>;
    const properties: Record<string, JsonSchema> = {};
    for (const field of fields) {
      const schema = fieldSchema(catalog, field, pending);
      const description = described[field.jsonName]?.description;
      properties[field.name] = typeof description === "string" ? { ...schema, description } : schema;
    }
    out.set(message, { $id: protoNameSchemaId(message), title: `${message} (protojson)`, type: "object", properties });
  }
  return [...out.keys()].sort().map((key) => out.get(key) as JsonSchema);
}

function fieldSchema(catalog: SchemaCatalog, field: FieldInfo, pending: string[]): JsonSchema {
  if (field.type === "map") {
    return {
      type: "object",
      additionalProperties: valueSchema(catalog, field.value ?? "string", field.valueRef, pending),
    };
  }
  const value = valueSchema(catalog, field.type, field.typeRef, pending);
  return field.repeated ? { type: "array", items: value } : value;
}

function valueSchema(catalog: SchemaCatalog, type: string, ref: string | undefined, pending: string[]): JsonSchema {
  if (type === "message") {
    if (ref === TIMESTAMP) return { type: "string", format: "date-time" };
    pending.push(ref ?? "");
    return { $ref: `${protoNameSchemaId(ref ?? "")}#` };
  }
  if (type === "enum") return { type: "string", enum: [...(catalog.enums[ref ?? ""] ?? [])] };
  if (INT64.has(type)) return { type: "string", pattern: "^-?[0-9]+$" };
  if (type === "double" || type === "float") return { type: ["number", "string"] };
  if (type === "bool") return { type: "boolean" };
  if (type === "string" || type === "bytes") return { type: "string" };
  return { type: "integer" };
}
