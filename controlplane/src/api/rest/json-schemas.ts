import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { jsonSchemaDir } from "../grpc/schema-package.js";

/** A JSON Schema object, as generated (draft-07 keywords only). */
export type JsonSchema = { readonly [keyword: string]: unknown };

/** One field of a message, from the generated field index (`proto-fields.json`). */
export interface FieldInfo {
  /** The proto field name (`workload_id`), used by protojson with UseProtoNames. */
  readonly name: string;
  /** The proto3 JSON name (`workloadId`), used by ts-proto's toJSON/fromJSON. */
  readonly jsonName: string;
  readonly number: number;
  /** A scalar type name (`string`, `int64`, ...), `enum`, `message` or `map`. */
  readonly type: string;
  /** Full name of the message or enum type, for `message` and `enum`. */
  readonly typeRef?: string;
  readonly repeated?: boolean;
  /** Map key scalar type, for `map`. */
  readonly key?: string;
  /** Map value type (scalar name, `enum` or `message`), for `map`. */
  readonly value?: string;
  readonly valueRef?: string;
  /** Name of the (real) oneof group the field belongs to. */
  readonly oneof?: string;
}

/** The generated JSON Schemas and field index of persys.api.v1 and persys.control.v1. */
export interface SchemaCatalog {
  /** Every schema, keyed by `$id` (`persys.api.v1.Workload.json`). */
  readonly schemas: ReadonlyMap<string, JsonSchema>;
  /** Fields of each message, by full name (`persys.control.v1.NodeView`). */
  readonly messages: Readonly<Record<string, readonly FieldInfo[]>>;
  /** Value names of each enum, by full name. */
  readonly enums: Readonly<Record<string, readonly string[]>>;
}

let cached: SchemaCatalog | undefined;

/**
 * Loads the generated JSON Schemas (`schema/src/gen/json-schema`, written by `npm run gen`). Cached
 * per process for the default directory.
 *
 * @throws Error when the directory or the field index is missing (run `npm run gen`).
 */
export function loadSchemaCatalog(dir?: string): SchemaCatalog {
  if (!dir && cached) return cached;
  const root = dir ?? jsonSchemaDir();
  const schemas = new Map<string, JsonSchema>();
  for (const file of readdirSync(root).sort()) {
    if (!file.endsWith(".json") || file === "proto-fields.json") continue;
    const schema = JSON.parse(readFileSync(join(root, file), "utf8")) as JsonSchema;
    schemas.set(String(schema.$id), schema);
  }
  const index = JSON.parse(readFileSync(join(root, "proto-fields.json"), "utf8")) as {
    messages: Record<string, FieldInfo[]>;
    enums: Record<string, string[]>;
  };
  const catalog = { schemas, messages: index.messages, enums: index.enums };
  if (!dir) cached = catalog;
  return catalog;
}

/** `{ $ref }` to the schema of a message or enum, as route schemas use it. */
export function refTo(fullName: string): JsonSchema {
  return { $ref: `${fullName}.json#` };
}

/** The `$ref` of a schema, bare or wrapped in a one-element `allOf` (the generator's form with a description). */
export function referenceOf(schema: JsonSchema): string | undefined {
  if (typeof schema.$ref === "string") return schema.$ref;
  const allOf = schema.allOf;
  if (Array.isArray(allOf) && allOf.length === 1) {
    const ref = (allOf[0] as JsonSchema).$ref;
    if (typeof ref === "string") return ref;
  }
  return undefined;
}

/**
 * The schema of one property of a message, with a `$ref` to an enum replaced by the enum itself
 * (query and path parameters must be inline for OpenAPI) and its description kept.
 *
 * @throws Error when the message or property does not exist (a route table mistake).
 */
export function propertySchema(catalog: SchemaCatalog, message: string, property: string): JsonSchema {
  const schema = catalog.schemas.get(`${message}.json`);
  const properties = schema?.properties as Record<string, JsonSchema> | undefined;
  const found = properties?.[property];
  if (!found) throw new Error(`${message} has no property ${property}`);
  return inlineEnums(catalog, found);
}

function inlineEnums(catalog: SchemaCatalog, schema: JsonSchema): JsonSchema {
  const wrapped = referenceOf(schema);
  if (wrapped !== undefined && schema.$ref === undefined) {
    // `{allOf: [{$ref}], description}`: the generator's form of a described reference.
    const { allOf: _allOf, ...annotations } = schema;
    const inner = inlineEnums(catalog, { $ref: wrapped });
    return inner.$ref === undefined ? { ...inner, ...annotations } : schema;
  }
  const { $ref, ...rest } = schema;
  if (typeof $ref === "string") {
    const target = catalog.schemas.get($ref.replace(/#$/, ""));
    if (target?.enum) return { type: "string", enum: target.enum, ...rest };
    return schema;
  }
  if (rest.items && typeof rest.items === "object") {
    return { ...rest, items: inlineEnums(catalog, rest.items as JsonSchema) };
  }
  return schema;
}
