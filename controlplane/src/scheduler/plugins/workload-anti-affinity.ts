import type { Cycle, FilterDetail, NodeFilter, RejectSink } from "../framework/plugin.js";
import { Reason } from "../framework/reasons.js";
import { SlotMarks } from "../framework/slot-marks.js";

/**
 * Filter: anti-affinity between workloads, in both directions. A node is rejected when it runs a
 * replica of a workload matched by this request's `antiAffinity.workloads` selectors
 * (WORKLOAD_ANTI_AFFINITY), or a replica of a workload whose own selectors match this request's
 * labels (AVOIDED_BY_WORKLOAD), so a rule holds whichever workload was placed first. The
 * workload's own replicas are never matched here (see replica-anti-affinity).
 */
export class WorkloadAntiAffinity implements NodeFilter {
  readonly scope = "node";
  readonly name = "workload-anti-affinity";
  readonly reasons = [Reason.WORKLOAD_ANTI_AFFINITY, Reason.AVOIDED_BY_WORKLOAD] as const;
  private readonly avoided = new SlotMarks();
  private readonly avoiding = new SlotMarks();
  private readonly markAvoided = (e: { slot: number }) => this.avoided.mark(e.slot);
  private readonly markAvoiding = (e: { slot: number }) => this.avoiding.mark(e.slot);

  prepare(cycle: Cycle): boolean {
    const { snapshot, request } = cycle;
    const capacity = snapshot.columns.capacity;
    this.avoided.reset(cycle.id, capacity);
    this.avoiding.reset(cycle.id, capacity);
    for (const selector of request.traits.avoids) {
      snapshot.workloads.forEachNodeMatching(selector, request.workloadId, this.markAvoided);
    }
    snapshot.workloads.forEachNodeAvoiding(request.traits, request.workloadId, this.markAvoiding);
    return this.avoided.size > 0 || this.avoiding.size > 0;
  }

  run(_cycle: Cycle, sink: RejectSink): void {
    for (let i = 0; i < this.avoided.size; i++) sink.reject(this.avoided.at(i), 0);
    for (let i = 0; i < this.avoiding.size; i++) sink.reject(this.avoiding.at(i), 1);
  }

  check(_cycle: Cycle, slot: number): number {
    return (this.avoided.has(slot) ? 1 : 0) | (this.avoiding.has(slot) ? 2 : 0);
  }

  /** Names the workloads on the node that cause the rejection (recomputed; for explanations only). */
  detail(cycle: Cycle, slot: number, reason: number): FilterDetail {
    const { snapshot, request } = cycle;
    const entry = snapshot.entryAt(slot);
    const ids = new Set<string>();
    const collect = (w: { id: string; nodeCounts: ReadonlyMap<unknown, number> }) => {
      if (w.nodeCounts.has(entry)) ids.add(w.id);
    };
    if (reason === 0) {
      for (const selector of request.traits.avoids)
        snapshot.workloads.forEachMatching(selector, request.workloadId, collect);
    } else snapshot.workloads.forEachAvoiding(request.traits, request.workloadId, collect);
    return { subject: [...ids].sort().join(", ") };
  }
}

/** The workload anti-affinity filter. */
export function workloadAntiAffinity(): WorkloadAntiAffinity {
  return new WorkloadAntiAffinity();
}
