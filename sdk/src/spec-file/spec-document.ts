import { api, withDefaults, workloadViolations } from "@persys/schema";
import { type Document, isAlias, isMap, isScalar, isSeq, LineCounter, type Node, parseAllDocuments } from "yaml";
import { friendlyEnumNames, resolveEnumName } from "../enums/friendly-enums.js";
import { closestName } from "./closest-name.js";
import type { FieldInfo } from "./field-table.js";
import { enumValues, messageFields, ROOT_MESSAGE } from "./gen/workload-fields.js";
import { SpecFileError, type SpecLocation, type SpecProblem } from "./spec-file-error.js";

/** One workload read from a spec file, with a way back from field paths to lines. */
export interface SpecDocument {
  /** The workload as written (kind inferred from its `container`/`compose`/`vm` member when omitted). */
  readonly workload: api.Workload;
  readonly file: string;
  /** 0-based index of the YAML document in its file. */
  readonly document: number;
  /** Where the document starts. */
  readonly location: SpecLocation;
  /** Where a field path (`container.ports[0].hostPort`) is written, or its nearest written parent. */
  locate(path: string): SpecLocation;
}

const kindOfMember: Record<string, string> = {
  container: "WORKLOAD_KIND_CONTAINER",
  compose: "WORKLOAD_KIND_COMPOSE",
  vm: "WORKLOAD_KIND_VM",
};

const int32 = { min: -(2 ** 31), max: 2 ** 31 - 1 };
const uint32 = { min: 0, max: 2 ** 32 - 1 };
const scalarRanges: Record<string, { min: number; max: number }> = {
  int32,
  sint32: int32,
  sfixed32: int32,
  uint32,
  fixed32: uint32,
};
const int64Types = new Set(["int64", "sint64", "sfixed64", "uint64", "fixed64"]);

/** Reads one YAML document against the field table, collecting values, positions and problems. */
class DocumentReader {
  readonly positions = new Map<string, number>();
  readonly problems: Omit<SpecProblem, "file" | "document" | "line" | "column">[] = [];
  readonly problemOffsets: number[] = [];

  constructor(private readonly doc: Document.Parsed) {}

  problem(node: Node | null | undefined, path: string, reason: string, offset?: number): undefined {
    this.problems.push({ path: path || "(document)", reason });
    this.problemOffsets.push(offset ?? node?.range?.[0] ?? 0);
    return undefined;
  }

  private resolve(node: unknown): Node | null | undefined {
    return isAlias(node) ? (node.resolve(this.doc) as Node | undefined) : (node as Node | null | undefined);
  }

  message(raw: unknown, name: string, path: string): Record<string, unknown> | undefined {
    const node = this.resolve(raw);
    if (!isMap(node)) return this.problem(node, path, `must be a mapping of ${shortName(name)} fields`);
    const fields = messageFields[name] ?? [];
    const out: Record<string, unknown> = {};
    const oneofs = new Map<string, string>();
    for (const pair of node.items) {
      const keyNode = this.resolve(pair.key);
      if (!isScalar(keyNode)) {
        this.problem(keyNode, path, "field names must be plain strings");
        continue;
      }
      const key = String(keyNode.value);
      const fieldPath = path ? `${path}.${key}` : key;
      this.positions.set(fieldPath, keyNode.range?.[0] ?? 0);
      const field = fields.find((f) => f.json === key);
      if (!field) {
        if (name === ROOT_MESSAGE && key === "status") continue; // output only: ignored, as by the API
        const hint = closestName(
          key,
          fields.map((f) => f.json),
        );
        this.problem(keyNode, fieldPath, `unknown field${hint ? ` (did you mean ${hint}?)` : ""}`);
        continue;
      }
      const value = this.resolve(pair.value);
      if (value === null || value === undefined || (isScalar(value) && value.value === null)) continue;
      if (field.oneof) {
        const other = oneofs.get(field.oneof);
        if (other) {
          this.problem(
            keyNode,
            fieldPath,
            `only one of ${oneofMembers(fields, field.oneof)} may be set (${other} is set too)`,
          );
          continue;
        }
        oneofs.set(field.oneof, key);
      }
      const read = this.field(field, value, fieldPath);
      if (read !== undefined) out[key] = read;
    }
    return out;
  }

  private field(field: FieldInfo, node: Node, path: string): unknown {
    if (field.type === "map") {
      if (!isMap(node)) return this.problem(node, path, "must be a mapping of names to values");
      const out: Record<string, unknown> = {};
      for (const pair of node.items) {
        const keyNode = this.resolve(pair.key);
        if (!isScalar(keyNode) || keyNode.value === null) {
          this.problem(keyNode, path, "keys must be plain strings");
          continue;
        }
        const key = keyNode.source ?? String(keyNode.value);
        const entryPath = `${path}.${key}`;
        this.positions.set(entryPath, keyNode.range?.[0] ?? 0);
        const value = this.resolve(pair.value);
        const read =
          field.value === "message" || field.value === "enum"
            ? this.single(field.value, field.ref ?? "", value, entryPath)
            : this.scalar(field.value ?? "string", value, entryPath);
        if (read !== undefined) out[key] = read;
      }
      return out;
    }
    if (field.repeated) {
      if (!isSeq(node)) return this.problem(node, path, "must be a list");
      const out: unknown[] = [];
      node.items.forEach((item, i) => {
        const resolved = this.resolve(item);
        const itemPath = `${path}[${i}]`;
        this.positions.set(itemPath, resolved?.range?.[0] ?? 0);
        const read = this.single(field.type, field.ref ?? "", resolved, itemPath);
        if (read !== undefined) out.push(read);
      });
      return out;
    }
    return this.single(field.type, field.ref ?? "", node, path);
  }

  private single(type: string, ref: string, node: Node | null | undefined, path: string): unknown {
    if (type === "message") return this.message(node, ref, path);
    if (type === "enum") return this.enumValue(ref, node, path);
    return this.scalar(type, node, path);
  }

  private enumValue(ref: string, node: Node | null | undefined, path: string): string | undefined {
    const names = enumValues[ref] ?? [];
    const accepted = friendlyEnumNames(names).join(", ");
    if (!isScalar(node) || typeof node.value !== "string")
      return this.problem(node, path, `must be one of ${accepted}`);
    const name = resolveEnumName(names, node.value);
    if (!name) return this.problem(node, path, `"${node.value}" is not one of ${accepted}`);
    return name;
  }

  private scalar(type: string, node: Node | null | undefined, path: string): unknown {
    const what = scalarWhat(type);
    if (!isScalar(node) || node.value === null) return this.problem(node, path, `must be ${what}`);
    const value = node.value;
    if (type === "string" || type === "bytes") {
      if (typeof value === "string") return value;
      if (type === "string" && (typeof value === "number" || typeof value === "boolean")) {
        return node.source ?? String(value);
      }
      return this.problem(node, path, `must be ${what}`);
    }
    if (type === "bool") return typeof value === "boolean" ? value : this.problem(node, path, "must be true or false");
    if (type === "double" || type === "float") {
      return typeof value === "number" ? value : this.problem(node, path, `must be ${what}`);
    }
    const range = scalarRanges[type];
    if (range) {
      if (typeof value !== "number" || !Number.isInteger(value)) return this.problem(node, path, `must be ${what}`);
      if (value < range.min || value > range.max) {
        return this.problem(node, path, `must be in ${range.min}..${range.max}`);
      }
      return value;
    }
    if (int64Types.has(type)) {
      if (typeof value === "number" && Number.isSafeInteger(value)) return value;
      if (typeof value === "string" && /^-?\d+$/.test(value)) return value;
      return this.problem(node, path, `must be ${what}`);
    }
    return this.problem(node, path, `has an unsupported type ${type}`);
  }
}

function scalarWhat(type: string): string {
  if (type === "string") return "a string";
  if (type === "bytes") return "a base64 string";
  if (type === "bool") return "true or false";
  if (type === "double" || type === "float") return "a number";
  return "an integer";
}

function shortName(name: string): string {
  return name.slice(name.lastIndexOf(".") + 1);
}

function oneofMembers(fields: readonly FieldInfo[], oneof: string): string {
  return fields
    .filter((f) => f.oneof === oneof)
    .map((f) => f.json)
    .join(", ");
}

/** The nearest recorded parent of a path: `a.b[2].c` → `a.b[2]` → `a.b` → `a`. */
function parentPath(path: string): string | undefined {
  const cut = Math.max(path.lastIndexOf("."), path.lastIndexOf("["));
  return cut > 0 ? path.slice(0, cut) : undefined;
}

/**
 * Parses spec-file text: one or more YAML (or JSON) documents separated by `---`, each a workload
 * in the proto3 JSON shape of `api.Workload` (lowerCamelCase names, a `container`, `compose` or `vm`
 * member for the kind). Friendly enum spellings are accepted (`kind: container`, `protocol: udp`,
 * `desiredState: stopped`, `mode: on-failure`, `operator: In`), as are the full names. A string field
 * takes a number or boolean as written (`tag: 1.10` is "1.10"). `null` leaves a field unset; `status`
 * is ignored. Empty documents are skipped; a document that is a list holds one workload per item (as
 * `persysctl get workloads -o json` prints them). Every workload is then validated as the server would.
 * Pure; does not touch the file system.
 *
 * @throws SpecFileError listing every problem (YAML syntax, unknown or mistyped fields, invalid
 *   values) with the file, line, column and field path.
 */
export function parseSpecText(text: string, file = "<stdin>"): SpecDocument[] {
  const lines = new LineCounter();
  const documents = parseAllDocuments(text, { lineCounter: lines, uniqueKeys: true });
  const list = Array.isArray(documents) ? documents : [];
  const problems: SpecProblem[] = [];
  const results: SpecDocument[] = [];
  const at = (offset: number): SpecLocation => {
    const pos = lines.linePos(offset);
    return { file, line: pos.line, column: pos.col };
  };
  list.forEach((doc, index) => {
    for (const error of [...doc.errors]) {
      problems.push({
        ...at(error.pos[0]),
        path: "(document)",
        reason: error.message.split("\n")[0]!,
        document: index,
      });
    }
    const contents = doc.contents;
    if (doc.errors.length > 0 || contents === null || (isScalar(contents) && contents.value === null)) return;
    // A document may also be a list of workloads (what `persysctl get workloads -o json` prints).
    const roots = isSeq(contents) ? contents.items : [contents];
    for (const root of roots) {
      const reader = new DocumentReader(doc);
      const json = reader.message(root, ROOT_MESSAGE, "");
      if (json && json.kind === undefined) {
        const member = Object.keys(kindOfMember).find((k) => k in json);
        if (member) json.kind = kindOfMember[member];
      }
      const start = (root as Node | null)?.range?.[0] ?? 0;
      const locate = (path: string): SpecLocation => {
        for (let p: string | undefined = path; p; p = parentPath(p)) {
          const offset = reader.positions.get(p);
          if (offset !== undefined) return at(offset);
        }
        return at(start);
      };
      reader.problems.forEach((p, i) => {
        problems.push({ ...at(reader.problemOffsets[i] ?? start), ...p, document: index });
      });
      if (!json || reader.problems.length > 0) continue;
      const workload = api.Workload.fromJSON(json);
      for (const v of workloadViolations(withDefaults(workload))) {
        problems.push({ ...locate(v.path), path: v.path, reason: v.reason, document: index });
      }
      results.push({ workload, file, document: index, location: at(start), locate });
    }
  });
  if (problems.length > 0) throw new SpecFileError(problems);
  return results;
}
