import { hostPortKey, type SchedulerNode } from "../model/scheduler-node.js";
import type { ChangeAspect } from "./cluster-change.js";

function sameSet<T>(a: readonly T[], b: readonly T[]): boolean {
  const sa = new Set(a);
  const sb = new Set(b);
  return sa.size === sb.size && [...sa].every((x) => sb.has(x));
}

/**
 * What replacing node record `before` by `after` may have made better for a pending replica (see
 * {@link ChangeAspect}). Only improvements count for capacity and schedulability (a cordon or a
 * shrink fixes nothing), except `topology`, which any schedulability, label or capability change
 * sets because the set of eligible spread domains can move either way.
 */
export function improvedAspects(before: SchedulerNode, after: SchedulerNode): ChangeAspect[] {
  const aspects = new Set<ChangeAspect>();
  if ((!before.ready && after.ready) || (before.cordoned && !after.cordoned) || (before.draining && !after.draining)) {
    aspects.add("node-schedulable");
  }
  if (before.ready !== after.ready || before.cordoned !== after.cordoned || before.draining !== after.draining) {
    aspects.add("topology");
  }
  const oldLabels = Object.entries(before.labels);
  if (oldLabels.length !== Object.keys(after.labels).length || oldLabels.some(([k, v]) => after.labels[k] !== v)) {
    aspects.add("labels").add("topology");
  }
  if (
    before.arch !== after.arch ||
    !sameSet(before.capabilities, after.capabilities) ||
    !sameSet(before.runtimes, after.runtimes)
  ) {
    aspects.add("capabilities").add("topology");
  }
  const a = before.allocatable;
  const b = after.allocatable;
  if (b.cpuMillicores > a.cpuMillicores || b.memoryMiB > a.memoryMiB || b.diskGiB > a.diskGiB) {
    aspects.add("capacity");
  }
  const kept = new Set((after.usedHostPorts ?? []).map(hostPortKey));
  if ((before.usedHostPorts ?? []).some((p) => !kept.has(hostPortKey(p)))) aspects.add("host-ports");
  return [...aspects];
}
