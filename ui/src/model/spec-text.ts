import { parse as parseYaml, stringify as toYaml } from "yaml";
import type { WorkloadJson } from "../api/wire-types.js";

/** A spec read from the editor, or why it could not be read (with the line when known). */
export type SpecParse =
  | { readonly ok: true; readonly workload: WorkloadJson; readonly format: "json" | "yaml" }
  | { readonly ok: false; readonly message: string };

/**
 * Reads a workload spec pasted as JSON or YAML (JSON is tried first when the text starts with `{`).
 * Accepts a bare Workload, or `{workload: {...}}` as PlanWorkloadRequest has it. The API validates the
 * fields; this only checks that there is an object with an `id`.
 */
export function parseSpecText(text: string): SpecParse {
  const trimmed = text.trim();
  if (!trimmed) return { ok: false, message: "The spec is empty." };
  let value: unknown;
  let format: "json" | "yaml" = "yaml";
  try {
    if (trimmed.startsWith("{")) {
      format = "json";
      value = JSON.parse(trimmed);
    } else value = parseYaml(trimmed);
  } catch (thrown) {
    return { ok: false, message: `Not valid ${format.toUpperCase()}: ${(thrown as Error).message}` };
  }
  if (value && typeof value === "object" && !Array.isArray(value) && "workload" in value) {
    value = (value as { workload: unknown }).workload;
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    return { ok: false, message: "The spec must be an object (a Workload)." };
  }
  const workload = value as WorkloadJson;
  if (typeof workload.id !== "string" || !workload.id) return { ok: false, message: "The spec needs an id." };
  const { status: _status, ...input } = workload;
  return { ok: true, workload: input as WorkloadJson, format };
}

/** The workload's input fields (no status) as YAML, for the editor. */
export function specToYaml(workload: WorkloadJson): string {
  const { status: _status, ...input } = workload;
  return toYaml(input);
}

/** A starting point for the plan editor. */
export const exampleSpec = `id: web
kind: WORKLOAD_KIND_CONTAINER
replicas: 1
resources:
  cpuMillicores: 100
  memoryMib: 64
labels:
  app: web
container:
  image: nginx:1.27
  ports:
    - containerPort: 80
      hostPort: 8080
`;
