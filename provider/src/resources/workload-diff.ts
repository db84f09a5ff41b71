/**
 * Field-level diff of two sets of canonical resource inputs (see `workload-inputs.ts`).
 *
 * Stable by construction: both sides are canonical (defaults left out, lists that are sets sorted,
 * maps compared by content), so `diffInputs(x, x)` is empty and a program that spells a default
 * out, or lists ports in another order, sees no change. Changing an immutable field replaces the
 * workload; a replacement that keeps the workload id, or publishes fixed host ports, deletes the
 * old one first (two workloads cannot share an id or a host port).
 */
import { containsUnknown } from "../plugin/property-values.js";
import type { WorkloadKindName } from "./resource-types.js";
import type { Inputs } from "./workload-inputs.js";

/** How one property changed, as the engine's `PropertyDiff.Kind` names it. */
export type PropertyChange = "ADD" | "DELETE" | "UPDATE" | "ADD_REPLACE" | "DELETE_REPLACE" | "UPDATE_REPLACE";

export interface InputsDiff {
  /** Whether anything changed. */
  readonly changes: boolean;
  /** Top-level properties whose change replaces the workload. */
  readonly replaces: readonly string[];
  readonly deleteBeforeReplace: boolean;
  /** Changed property paths (`env.LOG_LEVEL`, `ports[0].host`) and how. */
  readonly detailedDiff: Readonly<Record<string, PropertyChange>>;
}

/**
 * Inputs that cannot change in place. `name` is the workload id. A VM's base image and disks are
 * its storage: changing them means new disks, which the user should see as a replacement. A
 * Compose stack's project name is the identity Docker Compose knows it by.
 */
export const immutableInputs: Readonly<Record<WorkloadKindName, readonly string[]>> = {
  container: ["name"],
  compose: ["name", "projectName"],
  vm: ["name", "imageName", "imagePath", "disks"],
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The changed leaf paths between two JSON values, in Pulumi's property path syntax. */
function changedPaths(path: string, a: unknown, b: unknown, out: Map<string, "ADD" | "DELETE" | "UPDATE">): void {
  if (a === undefined && b === undefined) return;
  if (a === undefined) {
    out.set(path, "ADD");
    return;
  }
  if (b === undefined) {
    out.set(path, "DELETE");
    return;
  }
  if (isObject(a) && isObject(b)) {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const child = /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}["${key}"]`;
      changedPaths(child, a[key], b[key], out);
    }
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) changedPaths(`${path}[${i}]`, a[i], b[i], out);
    return;
  }
  if (a !== b) out.set(path, "UPDATE");
}

/** Whether any host port is fixed (published on a chosen port, not an ephemeral one). */
function hasFixedHostPorts(inputs: Inputs): boolean {
  const ports = inputs.ports;
  return Array.isArray(ports) && ports.some((p) => isObject(p) && typeof p.host === "number" && p.host > 0);
}

/**
 * The diff from `olds` to `news` (both canonical inputs). An unknown value in `news` (preview)
 * counts as a change of its property.
 */
export function diffInputs(kind: WorkloadKindName, olds: Inputs, news: Inputs): InputsDiff {
  const leaves = new Map<string, "ADD" | "DELETE" | "UPDATE">();
  for (const key of new Set([...Object.keys(olds), ...Object.keys(news)])) {
    if (containsUnknown(news[key])) leaves.set(key, "UPDATE");
    else changedPaths(key, olds[key], news[key], leaves);
  }
  const topOf = (path: string) => /^[^.[]+/.exec(path)?.[0] ?? path;
  const immutable = new Set(immutableInputs[kind]);
  const replaces = [...new Set([...leaves.keys()].map(topOf).filter((k) => immutable.has(k)))].sort();
  const detailedDiff: Record<string, PropertyChange> = {};
  for (const [path, change] of [...leaves.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
    detailedDiff[path] = immutable.has(topOf(path)) ? (`${change}_REPLACE` as PropertyChange) : change;
  }
  const sameId = olds.name !== undefined && olds.name === news.name;
  return {
    changes: leaves.size > 0,
    replaces,
    deleteBeforeReplace: replaces.length > 0 && (sameId || hasFixedHostPorts(news)),
    detailedDiff,
  };
}
