import { api } from "@persys/schema";
import { stringify } from "yaml";
import { friendlyEnumName } from "../enums/friendly-enums.js";
import { enumValues, messageFields, ROOT_MESSAGE } from "./gen/workload-fields.js";

function friendly(value: unknown, message: string): unknown {
  if (!value || typeof value !== "object" || Array.isArray(value)) return value;
  const fields = messageFields[message] ?? [];
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    const field = fields.find((f) => f.json === key);
    if (!field) continue;
    const kind = field.type === "map" ? field.value : field.type;
    const convert = (item: unknown): unknown => {
      if (kind === "enum" && typeof item === "string") return friendlyEnumName(enumValues[field.ref ?? ""] ?? [], item);
      if (kind === "message") return friendly(item, field.ref ?? "");
      return item;
    };
    if (field.type === "map" && v && typeof v === "object") {
      out[key] = Object.fromEntries(
        Object.entries(v as Record<string, unknown>).map(([k, item]) => [k, convert(item)]),
      );
    } else if (Array.isArray(v)) out[key] = v.map(convert);
    else out[key] = convert(v);
  }
  return out;
}

/**
 * The spec-file document of a workload: its input fields in the proto3 JSON shape (status left
 * out, default values omitted), enum values in their friendly spelling (`kind: container`,
 * `protocol: tcp`). {@link parseSpecText} reads it back to the same workload. Pure.
 */
export function specDocumentOf(workload: api.Workload): Record<string, unknown> {
  const json = api.Workload.toJSON({ ...workload, status: undefined }) as Record<string, unknown>;
  return friendly(json, ROOT_MESSAGE) as Record<string, unknown>;
}

/** Workloads as a YAML spec file: one document each, separated by `---`. */
export function specFileText(workloads: readonly api.Workload[]): string {
  return workloads.map((w) => stringify(specDocumentOf(w), { lineWidth: 0 })).join("---\n");
}
