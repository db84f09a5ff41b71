import type { JsonSchema } from "./json-schemas.js";

/**
 * Converts query-string values (always strings, or arrays of strings for repeated keys) to the types
 * the route's querystring schema declares, before validation: `"25"` → 25 for integers, `"true"` /
 * `"false"` → booleans (a bare `?follow` is true), a single value → a one-element array for arrays; the last value wins for a
 * repeated scalar. A value that does not convert is left as it is, so validation names it. Bodies are
 * never coerced (the validator runs with `coerceTypes: false`, so `"5"` for a string field is refused).
 */
export function coerceQuery(query: Record<string, unknown>, schema: JsonSchema | undefined): Record<string, unknown> {
  const properties = (schema?.properties ?? {}) as Record<string, JsonSchema>;
  const out: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(query)) {
    const property = properties[name];
    out[name] = property ? coerceValue(raw, property) : raw;
  }
  return out;
}

function coerceValue(raw: unknown, schema: JsonSchema): unknown {
  const types = typesOf(schema);
  if (types.includes("array")) {
    const items = (schema.items ?? {}) as JsonSchema;
    const list = Array.isArray(raw) ? raw : [raw];
    return list.map((item) => coerceScalar(item, typesOf(items)));
  }
  const last = Array.isArray(raw) ? raw[raw.length - 1] : raw;
  return coerceScalar(last, types);
}

function typesOf(schema: JsonSchema): string[] {
  const type = schema.type;
  if (Array.isArray(type)) return type.map(String);
  return typeof type === "string" ? [type] : [];
}

function coerceScalar(value: unknown, types: readonly string[]): unknown {
  if (typeof value !== "string" || types.includes("string")) return value;
  if ((types.includes("integer") || types.includes("number")) && /^-?\d+(\.\d+)?$/.test(value)) {
    return Number(value);
  }
  // A bare flag (`?follow`) arrives as "" and means true.
  if (types.includes("boolean") && (value === "true" || value === "false" || value === "")) return value !== "false";
  return value;
}
