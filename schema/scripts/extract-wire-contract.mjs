#!/usr/bin/env node
// One-off: turns the tables of the wire-contract fact sheet (markdown) into
// test-fixtures/wire-contract.json, the committed description of persys.control.v1 (scheduler copy)
// and persys.agent.v1 that the descriptor test compares our protos against.
//
//   node scripts/extract-wire-contract.mjs [path/to/wire-contract.md]
//
// The markdown is not committed (CI runs on a clean clone); only the JSON is. Re-run this only when
// the fact sheet itself changes. The script checks itself: per-package counts stated by the sheet,
// the wire type column against the field type, and the gRPC path column against the names.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const schemaDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const source = process.argv[2] ?? "/work/shared/reference/wire-contract.md";
const outFile = join(schemaDir, "test-fixtures", "wire-contract.json");

/** Packages to extract: heading that opens the section, and the counts the sheet states for it. */
const PACKAGES = [
  { name: "persys.control.v1", heading: "## 2. Package `persys.control.v1`", rpcs: 12, messages: 43, enums: 2 },
  { name: "persys.agent.v1", heading: "## 3. Package `persys.agent.v1`", rpcs: 6, messages: 27, enums: 3 },
];

const SCALARS = new Set([
  "double",
  "float",
  "int64",
  "uint64",
  "int32",
  "fixed64",
  "fixed32",
  "bool",
  "string",
  "bytes",
  "uint32",
  "sfixed32",
  "sfixed64",
  "sint32",
  "sint64",
]);
const WIRE_TYPE = {
  double: "I64 (1)",
  fixed64: "I64 (1)",
  sfixed64: "I64 (1)",
  float: "I32 (5)",
  fixed32: "I32 (5)",
  sfixed32: "I32 (5)",
  string: "LEN (2)",
  bytes: "LEN (2)",
  message: "LEN (2)",
  map: "LEN (2)",
};
const STREAMING = {
  unary: [false, false],
  "server stream": [false, true],
  "client stream": [true, false],
  "bidirectional stream": [true, true],
};

const markdown = readFileSync(source, "utf8");
const contract = {
  $comment:
    "Derived from the Persys wire-contract fact sheet by schema/scripts/extract-wire-contract.mjs. " +
    "Do not edit by hand. Type names are fully qualified without a leading dot.",
  packages: PACKAGES.map((pkg) => extractPackage(pkg, sectionOf(markdown, pkg.heading))),
};
writeFileSync(outFile, `${JSON.stringify(contract, null, 2)}\n`);
console.log(`wrote ${outFile}`);

function unquote(cell) {
  return cell.replace(/`/g, "");
}

function sectionOf(text, heading) {
  const start = text.indexOf(`${heading}\n`);
  if (start < 0) throw new Error(`heading not found: ${heading}`);
  const next = text.indexOf("\n## ", start + heading.length);
  return text.slice(start, next < 0 ? undefined : next);
}

/** Splits a section into blocks that start with a bold `**kind `Name`**` line. */
function blocks(section, kind) {
  const re = new RegExp(`^\\*\\*${kind} \`([A-Za-z0-9_]+)\`\\*\\*.*$`, "gm");
  const heads = [...section.matchAll(re)];
  return heads.map((m, i) => ({
    name: m[1],
    body: section.slice(m.index + m[0].length, heads[i + 1]?.index ?? nextBoldHeading(section, m.index + m[0].length)),
  }));
}

function nextBoldHeading(section, from) {
  const rest = section.slice(from);
  const m = /^(\*\*|#{2,4} )/m.exec(rest);
  return m ? from + m.index : section.length;
}

/** Data rows of the first markdown table in `body`, as arrays of trimmed cells without backticks. */
function rows(body) {
  const lines = body.split("\n").filter((l) => l.startsWith("|"));
  return lines.slice(2).map((l) =>
    l
      .slice(1, -1)
      .split("|")
      .map((c) => c.trim()),
  );
}

function extractPackage(pkg, section) {
  const qualify = (name) => (name.includes(".") ? name : `${pkg.name}.${name}`);

  const services = blocks(section, "service").map(({ name, body }) => ({
    name,
    methods: rows(body).map(([rpc, input, output, streaming, path]) => {
      const mode = STREAMING[streaming];
      if (!mode) throw new Error(`${name}: unknown streaming mode "${streaming}"`);
      const method = {
        name: unquote(rpc),
        inputType: qualify(unquote(input)),
        outputType: qualify(unquote(output)),
        clientStreaming: mode[0],
        serverStreaming: mode[1],
      };
      const expected = `/${pkg.name}.${name}/${method.name}`;
      if (unquote(path) !== expected) throw new Error(`${expected}: path column says ${path}`);
      return method;
    }),
  }));

  const enums = blocks(section, "enum").map(({ name, body }) => ({
    name,
    values: rows(body).map(([number, value]) => ({ name: unquote(value), number: Number(number) })),
  }));

  const messages = blocks(section, "message").map(({ name, body }) => ({
    name,
    fields: body.includes("_No fields") ? [] : rows(body).map((row) => field(name, row, qualify)),
  }));

  const rpcCount = services.reduce((n, s) => n + s.methods.length, 0);
  const counts = [rpcCount, messages.length, enums.length];
  if (counts.join() !== [pkg.rpcs, pkg.messages, pkg.enums].join()) {
    throw new Error(
      `${pkg.name}: parsed ${counts.join("/")} RPCs/messages/enums, sheet says ${pkg.rpcs}/${pkg.messages}/${pkg.enums}`,
    );
  }
  return { package: pkg.name, services, enums, messages };
}

function field(messageName, [number, name, typeCell, label, oneof, wire], qualify) {
  const out = { number: Number(number), name: unquote(name), label };
  const map = /^`map<(\w+), (\w+)>`$/.exec(typeCell);
  const isEnum = typeCell.endsWith("(enum)");
  const typeName = unquote(typeCell.replace(/\s*\(enum\)$/, ""));
  if (map) {
    if (label !== "map") throw new Error(`${messageName}.${out.name}: map type with label ${label}`);
    Object.assign(out, { type: "map", mapKey: map[1], mapValue: map[2] });
  } else if (SCALARS.has(typeName)) {
    out.type = typeName;
  } else {
    Object.assign(out, { type: isEnum ? "enum" : "message", typeName: qualify(typeName) });
  }
  if (!["singular", "repeated", "map"].includes(label)) throw new Error(`${messageName}.${out.name}: label ${label}`);
  if (oneof) out.oneof = unquote(oneof);
  const expectedWire = WIRE_TYPE[out.type] ?? "VARINT (0)";
  if (!wire.startsWith(expectedWire))
    throw new Error(`${messageName}.${out.name}: wire ${wire}, type implies ${expectedWire}`);
  return out;
}
