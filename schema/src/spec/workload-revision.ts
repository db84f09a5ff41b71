import { createHash } from "node:crypto";
import { Workload } from "../gen/persys/api/v1/workload.js";
import { withDefaults } from "./workload-defaults.js";

/** Stable JSON: object keys sorted, undefined members dropped (for content hashes). */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * The revision of a workload: a content hash of what its replicas run — kind, resources, placement
 * and the runtime spec, after defaults. Replicas, desired state, labels and the update strategy are
 * not part of it: scaling, stopping or relabelling a workload does not recreate its replicas.
 * Map order and written-out defaults do not change it; list order does.
 */
export function workloadRevision(workload: Workload): string {
  return defaultedWorkloadRevision(withDefaults(workload));
}

/** {@link workloadRevision} of a workload that already went through `withDefaults` (skips doing it again). */
export function defaultedWorkloadRevision(normalized: Workload): string {
  const json = Workload.toJSON({
    ...Workload.fromPartial({}),
    kind: normalized.kind,
    resources: normalized.resources,
    placement: normalized.placement,
    spec: normalized.spec,
  });
  return createHash("sha256").update(canonical(json)).digest("hex").slice(0, 16);
}
