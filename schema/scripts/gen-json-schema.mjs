#!/usr/bin/env node
// Generates schema/src/gen/json-schema from schema/proto: one JSON Schema (draft-07) per message and
// enum of persys.api.v1 and persys.control.v1, in the proto3 JSON mapping (lowerCamelCase names, enums
// as value names, 64-bit integers as numbers or decimal strings, Timestamps as RFC 3339 strings), plus
// `proto-fields.json`, a compact field index (proto name, JSON name, type) that JSON layers use to
// convert between the JSON mapping and protojson's proto-name form.
//
// Every message schema has `additionalProperties: false`, so a request with an unknown field fails
// validation naming it. Schemas reference each other by file name (`$ref: "persys.api.v1.Resources.json"`),
// so they resolve both when loaded into one validator and when read from disk.
//
// Run by scripts/gen.mjs after `buf generate`; also runnable alone. The output is deterministic
// (declaration order, fixed formatting), so CI's drift check (scripts/check-generated.sh) covers it.
import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { fromBinary, isFieldSet } from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FieldDescriptorProtoSchema,
  FileDescriptorSetSchema,
} from "@bufbuild/protobuf/wkt";

const schemaDir = join(dirname(fileURLToPath(import.meta.url)), "..");
// `--out <dir>` writes elsewhere (tests compare a fresh run with the committed output).
const outFlag = process.argv.indexOf("--out");
const outDir = outFlag > 0 ? process.argv[outFlag + 1] : join(schemaDir, "src", "gen", "json-schema");
const PACKAGES = ["persys.api.v1", "persys.control.v1"];
const TIMESTAMP = "google.protobuf.Timestamp";

const T = FieldDescriptorProto_Type;
const SCALARS = {
  [T.DOUBLE]: "double",
  [T.FLOAT]: "float",
  [T.INT64]: "int64",
  [T.UINT64]: "uint64",
  [T.INT32]: "int32",
  [T.FIXED64]: "fixed64",
  [T.FIXED32]: "fixed32",
  [T.BOOL]: "bool",
  [T.STRING]: "string",
  [T.BYTES]: "bytes",
  [T.UINT32]: "uint32",
  [T.SFIXED32]: "sfixed32",
  [T.SFIXED64]: "sfixed64",
  [T.SINT32]: "sint32",
  [T.SINT64]: "sint64",
};

/** JSON Schema of one scalar in the proto3 JSON mapping. */
function scalarSchema(type) {
  switch (type) {
    case "double":
    case "float":
      return { type: "number" };
    case "int32":
    case "sint32":
    case "sfixed32":
      return { type: "integer", format: "int32", minimum: -2147483648, maximum: 2147483647 };
    case "uint32":
    case "fixed32":
      return { type: "integer", minimum: 0, maximum: 4294967295 };
    case "int64":
    case "sint64":
    case "sfixed64":
      return { type: ["integer", "string"], format: "int64", pattern: "^-?[0-9]+$" };
    case "uint64":
    case "fixed64":
      return { type: ["integer", "string"], minimum: 0, pattern: "^[0-9]+$" };
    case "bool":
      return { type: "boolean" };
    case "string":
      return { type: "string" };
    case "bytes":
      return { type: "string", contentEncoding: "base64", pattern: "^[A-Za-z0-9+/_-]*={0,2}$" };
    default:
      throw new Error(`unknown scalar ${type}`);
  }
}

function buildDescriptors() {
  const buf = createRequire(import.meta.url).resolve("@bufbuild/buf/bin/buf");
  const result = spawnSync(process.execPath, [buf, "build", "--as-file-descriptor-set", "-o", "-"], {
    cwd: schemaDir,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) fail(`buf build failed: ${result.stderr.toString()}`);
  return fromBinary(FileDescriptorSetSchema, new Uint8Array(result.stdout)).file;
}

/** Leading comments by source path ("4.0.2.1"), trimmed of the comment indentation. */
function commentsOf(file) {
  const comments = new Map();
  for (const location of file.sourceCodeInfo?.location ?? []) {
    const text = (location.leadingComments ?? "")
      .split("\n")
      .map((line) => line.replace(/^ /, "").trimEnd())
      .join("\n")
      .trim();
    if (text) comments.set(location.path.join("."), text);
  }
  return comments;
}

const strip = (typeName) => typeName.replace(/^\./, "");

/** Collects every message and enum of the wanted packages, with their source comments. */
function collect(files) {
  const messages = new Map();
  const enums = new Map();
  for (const file of files) {
    if (!PACKAGES.includes(file.package)) continue;
    const comments = commentsOf(file);
    const addEnum = (prefix, e, path) => {
      enums.set(`${prefix}.${e.name}`, { descriptor: e, path, comments });
    };
    const addMessage = (prefix, m, path) => {
      const fullName = `${prefix}.${m.name}`;
      if (m.options?.mapEntry) return;
      messages.set(fullName, { descriptor: m, path, comments });
      for (const [i, n] of m.nestedType.entries()) addMessage(fullName, n, `${path}.3.${i}`);
      for (const [i, e] of m.enumType.entries()) addEnum(fullName, e, `${path}.4.${i}`);
    };
    for (const [i, m] of file.messageType.entries()) addMessage(file.package, m, `4.${i}`);
    for (const [i, e] of file.enumType.entries()) addEnum(file.package, e, `5.${i}`);
  }
  return { messages, enums, mapEntries: mapEntriesOf(files) };
}

function mapEntriesOf(files) {
  const entries = new Map();
  const walk = (prefix, m) => {
    const fullName = `${prefix}.${m.name}`;
    if (m.options?.mapEntry) entries.set(fullName, m);
    for (const n of m.nestedType) walk(fullName, n);
  };
  for (const file of files) for (const m of file.messageType) walk(file.package, m);
  return entries;
}

/** The field index entry of one field: its names and type, enough to convert its JSON. */
function fieldInfo(field, mapEntries) {
  const info = { name: field.name, jsonName: field.jsonName, number: field.number };
  const entry = field.type === T.MESSAGE ? mapEntries.get(strip(field.typeName)) : undefined;
  if (entry) {
    const [key, value] = entry.field;
    info.type = "map";
    info.key = SCALARS[key.type];
    Object.assign(info, valueType(value, "value"));
    return info;
  }
  Object.assign(info, valueType(field, "type"));
  if (field.label === FieldDescriptorProto_Label.REPEATED) info.repeated = true;
  return info;
}

/** `{type}` or `{type, ref}` of a field or map value, under the key `key` ("type" or "value"). */
function valueType(field, key) {
  if (field.type === T.MESSAGE) return { [key]: "message", [`${key}Ref`]: strip(field.typeName) };
  if (field.type === T.ENUM) return { [key]: "enum", [`${key}Ref`]: strip(field.typeName) };
  const scalar = SCALARS[field.type];
  if (!scalar) throw new Error(`unsupported field type ${field.type} of ${field.name}`);
  return { [key]: scalar };
}

/** JSON Schema of one value (a field's element, or a map's value). */
function valueSchema(type, ref) {
  if (type === "message") {
    if (ref === TIMESTAMP) return { type: "string", format: "date-time" };
    if (!PACKAGES.some((p) => ref.startsWith(`${p}.`))) throw new Error(`unsupported message type ${ref}`);
    return { $ref: `${ref}.json` };
  }
  if (type === "enum") return { $ref: `${ref}.json` };
  return scalarSchema(type);
}

function fieldSchema(info) {
  if (info.type === "map") {
    const schema = { type: "object", additionalProperties: valueSchema(info.value, info.valueRef) };
    if (info.key === "bool") schema.propertyNames = { enum: ["true", "false"] };
    else if (info.key !== "string") schema.propertyNames = { pattern: "^-?[0-9]+$" };
    return schema;
  }
  const element = valueSchema(info.type, info.typeRef);
  return info.repeated ? { type: "array", items: element } : element;
}

function messageSchema(fullName, { descriptor, path, comments }, mapEntries) {
  const properties = {};
  const fields = [];
  descriptor.field.forEach((field, i) => {
    const info = fieldInfo(field, mapEntries);
    let schema = fieldSchema(info);
    const description = comments.get(`${path}.2.${i}`);
    if (description) {
      // Keywords beside a $ref are ignored in draft-07 (and dropped in OpenAPI): wrap the reference.
      if (schema.$ref) schema = { allOf: [schema] };
      schema.description = description;
      if (/^Output only\b/.test(description)) schema.readOnly = true;
    }
    properties[field.jsonName] = schema;
    const real = isFieldSet(field, FieldDescriptorProtoSchema.field.oneofIndex) && !field.proto3Optional;
    if (real) info.oneof = descriptor.oneofDecl[field.oneofIndex].name;
    fields.push(info);
  });
  const schema = { $id: `${fullName}.json`, title: fullName, type: "object" };
  const description = comments.get(path);
  if (description) schema.description = description;
  schema.properties = properties;
  schema.additionalProperties = false;
  const exclusive = oneofPairs(fields);
  if (exclusive.length > 0) schema.allOf = exclusive;
  return { schema, fields };
}

/** `not both` rules for every pair of members of a real oneof: at most one member may be set. */
function oneofPairs(fields) {
  const groups = new Map();
  for (const f of fields) if (f.oneof) groups.set(f.oneof, [...(groups.get(f.oneof) ?? []), f.jsonName]);
  const rules = [];
  for (const [group, members] of groups) {
    for (let i = 0; i < members.length; i++) {
      for (let j = i + 1; j < members.length; j++) {
        rules.push({ title: `oneof ${group}`, not: { type: "object", required: [members[i], members[j]] } });
      }
    }
  }
  return rules;
}

function enumSchema(fullName, { descriptor, path, comments }) {
  const values = descriptor.value.map((v) => v.name);
  const lines = descriptor.value.flatMap((v, i) => {
    const text = comments.get(`${path}.2.${i}`);
    return text ? [`- ${v.name}: ${text.replace(/\n/g, " ")}`] : [];
  });
  const description = [comments.get(path), lines.join("\n")].filter(Boolean).join("\n\n");
  const schema = { $id: `${fullName}.json`, title: fullName };
  if (description) schema.description = description;
  return { schema: { ...schema, type: "string", enum: values }, values };
}

function main() {
  if (!outDir) fail("--out needs a directory");
  const { messages, enums, mapEntries } = collect(buildDescriptors());
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const index = { messages: {}, enums: {} };
  for (const fullName of [...messages.keys()].sort()) {
    const { schema, fields } = messageSchema(fullName, messages.get(fullName), mapEntries);
    write(`${fullName}.json`, schema);
    index.messages[fullName] = fields;
  }
  for (const fullName of [...enums.keys()].sort()) {
    const { schema, values } = enumSchema(fullName, enums.get(fullName));
    write(`${fullName}.json`, schema);
    index.enums[fullName] = values;
  }
  write("proto-fields.json", index);
  console.log(`gen-json-schema: ${messages.size} messages, ${enums.size} enums`);
}

function write(name, value) {
  writeFileSync(join(outDir, name), `${JSON.stringify(value, null, 2)}\n`);
}

function fail(message) {
  console.error(`gen-json-schema: ${message}`);
  process.exit(1);
}

main();
