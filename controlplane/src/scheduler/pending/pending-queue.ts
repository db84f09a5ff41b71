import type { PlacementDiagnosis } from "../diagnosis/placement-diagnosis.js";
import { type ReasonCode, reasonsFixedBy } from "../framework/reasons.js";
import type { ClusterChange } from "../snapshot/cluster-change.js";
import { replicaKey } from "../snapshot/node-entry.js";

/** A replica that fits nowhere yet, with the diagnosis that says why. */
export interface PendingReplica {
  readonly workloadId: string;
  readonly replica: number;
  readonly diagnosis: PlacementDiagnosis;
  /** Snapshot generation of the diagnosis; changes at or before it are already accounted for. */
  readonly generation: number;
  /** Every reason some node failed for. */
  readonly reasons: ReadonlySet<ReasonCode>;
}

interface Entry extends PendingReplica {
  readonly key: string;
  readonly seq: number;
}

/**
 * Replicas waiting for the cluster to change, indexed by the reasons they failed for. Retries
 * are event-driven, not timed: for each {@link ClusterChange} the queue names the pending
 * replicas that change could help — those with a failing reason the change's aspects can fix
 * (`reasonCatalog[reason].fixedBy`; a new node can fix anything) and a diagnosis older than the
 * change. A replica failing only for insufficient memory is not retried when a node is relabelled.
 *
 * The queue never removes entries by itself: after retrying, `record` the new diagnosis or
 * `resolve` the replica.
 */
export class PendingQueue {
  private readonly entries = new Map<string, Entry>();
  private readonly byReason = new Map<ReasonCode, Set<Entry>>();
  private readonly byWorkload = new Map<string, Set<Entry>>();
  private seq = 0;

  /** Number of pending replicas. */
  get size(): number {
    return this.entries.size;
  }

  /** Records (or replaces) a pending replica from its unschedulable diagnosis. */
  record(diagnosis: PlacementDiagnosis): PendingReplica {
    const key = replicaKey(diagnosis.workloadId, diagnosis.replica);
    this.drop(key);
    const entry: Entry = {
      key,
      seq: this.seq++,
      workloadId: diagnosis.workloadId,
      replica: diagnosis.replica,
      diagnosis,
      generation: diagnosis.generation,
      reasons: new Set(diagnosis.filterCounts.map((c) => c.reason)),
    };
    this.entries.set(key, entry);
    let mine = this.byWorkload.get(entry.workloadId);
    if (mine === undefined) {
      mine = new Set();
      this.byWorkload.set(entry.workloadId, mine);
    }
    mine.add(entry);
    for (const reason of entry.reasons) {
      let set = this.byReason.get(reason);
      if (set === undefined) {
        set = new Set();
        this.byReason.set(reason, set);
      }
      set.add(entry);
    }
    return entry;
  }

  /** Removes a replica (placed, deleted or scaled away); false if it was not pending. */
  resolve(workloadId: string, replica: number): boolean {
    return this.drop(replicaKey(workloadId, replica));
  }

  /** Removes every pending replica of a workload. */
  removeWorkload(workloadId: string): number {
    const keys = [...(this.byWorkload.get(workloadId) ?? [])].map((e) => e.key);
    for (const key of keys) this.drop(key);
    return keys.length;
  }

  /** The pending entry of a replica. */
  get(workloadId: string, replica: number): PendingReplica | undefined {
    return this.entries.get(replicaKey(workloadId, replica));
  }

  /** Every pending replica, oldest record first. */
  list(): PendingReplica[] {
    return [...this.entries.values()];
  }

  /**
   * The pending replicas worth retrying after `change`, oldest record first: those diagnosed
   * before the change with a reason it can fix. Changes with no aspects (usage reports, new
   * reservations) select nothing.
   */
  retryCandidates(change: ClusterChange): PendingReplica[] {
    if (change.aspects.length === 0) return [];
    const selected = new Set<Entry>();
    if (change.aspects.includes("node-added")) {
      for (const e of this.entries.values()) selected.add(e);
    } else {
      for (const reason of reasonsFixedBy(change.aspects)) {
        const set = this.byReason.get(reason);
        if (set) for (const e of set) selected.add(e);
      }
    }
    return [...selected].filter((e) => e.generation < change.generation).sort((a, b) => a.seq - b.seq);
  }

  private drop(key: string): boolean {
    const entry = this.entries.get(key);
    if (entry === undefined) return false;
    this.entries.delete(key);
    const mine = this.byWorkload.get(entry.workloadId);
    mine?.delete(entry);
    if (mine?.size === 0) this.byWorkload.delete(entry.workloadId);
    for (const reason of entry.reasons) {
      const set = this.byReason.get(reason);
      set?.delete(entry);
      if (set?.size === 0) this.byReason.delete(reason);
    }
    return true;
  }
}
