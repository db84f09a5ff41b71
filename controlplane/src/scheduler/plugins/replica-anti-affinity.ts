import type { Cycle, FilterDetail, NodeFilter, RejectSink } from "../framework/plugin.js";
import { Reason } from "../framework/reasons.js";
import { SlotMarks } from "../framework/slot-marks.js";

/**
 * Filter for `antiAffinity.replicas: required`: a node already running a replica of the same
 * workload is rejected. (The default, `preferred`, only scores; see the replica-spread scorer.)
 */
export class ReplicaAntiAffinity implements NodeFilter {
  readonly scope = "node";
  readonly name = "replica-anti-affinity";
  readonly reasons = [Reason.REPLICA_ANTI_AFFINITY] as const;
  private readonly siblings = new SlotMarks();
  private readonly markSibling = (count: number, entry: { slot: number }): void => {
    this.siblings.mark(entry.slot, count);
  };

  prepare(cycle: Cycle): boolean {
    if (cycle.request.replicaAntiAffinity !== "required" || cycle.workload === undefined) return false;
    this.siblings.reset(cycle.id, cycle.snapshot.columns.capacity);
    cycle.workload.nodeCounts.forEach(this.markSibling);
    return true;
  }

  run(_cycle: Cycle, sink: RejectSink): void {
    for (let i = 0; i < this.siblings.size; i++) sink.reject(this.siblings.at(i), 0);
  }

  check(_cycle: Cycle, slot: number): number {
    return this.siblings.has(slot) ? 1 : 0;
  }

  detail(_cycle: Cycle, slot: number): FilterDetail {
    return { subject: `${this.siblings.count(slot)} replica(s) on the node` };
  }
}

/** The replica anti-affinity filter. */
export function replicaAntiAffinity(): ReplicaAntiAffinity {
  return new ReplicaAntiAffinity();
}
