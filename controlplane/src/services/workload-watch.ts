import { api, PersysError } from "@persys/schema";
import type { ClusterState, StateChange } from "../cluster/cluster-state.js";
import type { WorkloadRecord } from "../cluster/records.js";
import { parseLabelSelector } from "../workloads/label-selector-query.js";
import { workloadView } from "../workloads/workload-view.js";

interface Tombstone {
  readonly revision: number;
  readonly workload: api.Workload;
}

/**
 * Streams workload changes to watchers. Any change to a workload's record, assignments, reports or
 * pending diagnoses is one MODIFIED event with the workload's current view (bursts are coalesced).
 * Resuming from a store revision replays, as current views, every workload changed since, plus the
 * deletions remembered since this server started (older ones: COMPACTED, list again).
 */
export class WorkloadWatch {
  private readonly tombstones = new Map<string, Tombstone>();
  private readonly since: number;
  private lastViews = new Map<string, api.Workload>();

  constructor(
    private readonly state: ClusterState,
    private readonly maxTombstones = 10_000,
  ) {
    this.since = state.revision;
    state.onChange((change) => this.remember(change));
  }

  private remember(change: StateChange): void {
    if (change.key.kind !== "workload") return;
    const id = change.key.workloadId!;
    if (change.type === "delete") {
      const last =
        this.lastViews.get(id) ?? api.Workload.fromJSON((change.previous as WorkloadRecord)?.workload ?? { id });
      this.tombstones.set(id, { revision: change.revision, workload: last });
      if (this.tombstones.size > this.maxTombstones) this.tombstones.delete(this.tombstones.keys().next().value!);
      this.lastViews.delete(id);
    } else {
      this.tombstones.delete(id);
    }
  }

  private lastChange(id: string): number {
    const s = this.state;
    let revision = s.workloads.get(id)?.modRevision ?? 0;
    for (const index of s.replicaIndexes(id)) {
      revision = Math.max(
        revision,
        s.assignment(id, index)?.modRevision ?? 0,
        s.status(id, index)?.modRevision ?? 0,
        s.pendingOf(id, index)?.modRevision ?? 0,
      );
    }
    return revision;
  }

  async *watch(request: api.WatchWorkloadsRequest, signal: AbortSignal): AsyncIterable<api.WatchWorkloadsResponse> {
    const matchLabels = parseLabelSelector(request.labelSelector);
    const full = request.view === api.WorkloadView.WORKLOAD_VIEW_FULL;
    const matches = (w: api.Workload) =>
      (!request.workloadId || w.id === request.workloadId) &&
      (!request.kind || w.kind === request.kind) &&
      matchLabels(w.labels);
    const dirty = new Set<string>();
    let wake: (() => void) | undefined;
    const unsubscribe = this.state.onChange((change) => {
      const id = change.key.workloadId;
      if (!id || !["workload", "assignment", "status", "pending"].includes(change.key.kind)) return;
      if (request.workloadId && id !== request.workloadId) return;
      dirty.add(id);
      wake?.();
    });
    const onAbort = () => wake?.();
    signal.addEventListener("abort", onAbort);
    const view = (id: string) => {
      const held = this.state.workloads.get(id);
      if (!held) return undefined;
      const w = workloadView(this.state, held, full);
      this.lastViews.set(id, w);
      return w;
    };
    try {
      const after = request.afterStoreRevision;
      if (after > 0 && after < this.since) {
        throw new PersysError(
          "COMPACTED",
          `revision ${after} is older than this server's watch history (${this.since}); list again`,
          {
            details: [{ path: "afterStoreRevision", reason: "too old" }],
          },
        );
      }
      for (const id of [...this.state.workloads.keys()].sort()) {
        if (after > 0 && this.lastChange(id) <= after) continue;
        const w = view(id);
        if (w && matches(w)) {
          yield {
            type: after > 0 ? api.WatchEventType.WATCH_EVENT_TYPE_MODIFIED : api.WatchEventType.WATCH_EVENT_TYPE_ADDED,
            workload: w,
            storeRevision: this.state.revision,
          };
        }
      }
      for (const [id, t] of this.tombstones) {
        if (after > 0 && t.revision > after && matches(t.workload)) {
          yield { type: api.WatchEventType.WATCH_EVENT_TYPE_DELETED, workload: t.workload, storeRevision: t.revision };
        }
        void id;
      }
      const known = new Set([...this.state.workloads.keys()]);
      // Resume point already handed out: every change after it is still to be delivered.
      let delivered = this.state.revision;
      while (!signal.aborted) {
        if (dirty.size === 0) await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        if (signal.aborted) break;
        await new Promise((r) => setTimeout(r, 25));
        const ids = [...dirty].sort();
        dirty.clear();
        const batchRevision = this.state.revision;
        // Every event of a coalesced batch but the last carries the revision before the batch, so a
        // watcher resuming after any of them is replayed the rest (a repeat of the same view is harmless).
        const pending: api.WatchWorkloadsResponse[] = [];
        for (const id of ids) {
          const w = view(id);
          if (w) {
            if (!matches(w)) continue;
            const type = known.has(id)
              ? api.WatchEventType.WATCH_EVENT_TYPE_MODIFIED
              : api.WatchEventType.WATCH_EVENT_TYPE_ADDED;
            known.add(id);
            pending.push({ type, workload: w, storeRevision: delivered });
          } else if (known.delete(id)) {
            const gone = this.tombstones.get(id)?.workload ?? api.Workload.fromPartial({ id });
            if (matches(gone)) {
              pending.push({
                type: api.WatchEventType.WATCH_EVENT_TYPE_DELETED,
                workload: gone,
                storeRevision: delivered,
              });
            }
          }
        }
        const last = pending.at(-1);
        if (last) last.storeRevision = batchRevision;
        for (const event of pending) yield event;
        delivered = batchRevision;
      }
    } finally {
      unsubscribe();
      signal.removeEventListener("abort", onAbort);
    }
  }
}
