import type { Cycle, NodeFilter, RejectSink } from "../framework/plugin.js";
import { Reason } from "../framework/reasons.js";
import { setBit, wordsFor } from "../snapshot/node-bitset.js";

/**
 * Filter for a replica being moved (MoveReplica, or automation's rebalance): the nodes it leaves
 * are rejected, and with a target node every other node. Inactive for ordinary placements.
 */
export class ReplicaMove implements NodeFilter {
  readonly scope = "node";
  readonly name = "replica-move";
  readonly reasons = [Reason.NODE_BEING_LEFT, Reason.NOT_MOVE_TARGET] as const;
  private leaving: number[] = [];
  /** -1: no target; -2: the target is not in the snapshot (every node fails). */
  private target = -1;
  private targetBits = new Uint32Array(0);

  prepare(cycle: Cycle): boolean {
    const move = cycle.request.move;
    if (move === undefined) return false;
    this.leaving = move.leaving.flatMap((id) => {
      const entry = cycle.snapshot.entryOf(id);
      return entry ? [entry.slot] : [];
    });
    this.target = move.target ? (cycle.snapshot.entryOf(move.target)?.slot ?? -2) : -1;
    return true;
  }

  run(cycle: Cycle, sink: RejectSink): void {
    for (const slot of this.leaving) sink.reject(slot, 0);
    if (this.target === -1) return;
    const n = cycle.snapshot.nodeCount;
    this.targetBits = new Uint32Array(wordsFor(n));
    if (this.target >= 0) setBit(this.targetBits, this.target);
    sink.rejectAllBut(this.targetBits, 1, this.target >= 0 ? n - 1 : n);
  }

  check(_cycle: Cycle, slot: number): number {
    return (this.leaving.includes(slot) ? 1 : 0) | (this.target !== -1 && slot !== this.target ? 2 : 0);
  }
}

/** The replica-move filter. */
export function replicaMove(): ReplicaMove {
  return new ReplicaMove();
}
