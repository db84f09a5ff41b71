import type { PersysError } from "@persys/schema";
import type { KeyValue, Revision, StateStore, Watch } from "../state/state-store.js";
import type { ClusterKeys, ParsedKey } from "./keys.js";
import {
  type AssignmentRecord,
  decodeRecord,
  type LivenessRecord,
  type NodeRecord,
  type PendingRecord,
  type ReplicaStatusRecord,
  type SecretRecord,
  type StrayRecord,
  type WorkloadRecord,
} from "./records.js";

/** A record with the store revision of its last change (for compare-and-swap writes). */
export interface Versioned<T> {
  readonly value: T;
  readonly modRevision: Revision;
  readonly createRevision: Revision;
}

/** One change seen in the store, after the cache applied it. */
export interface StateChange {
  readonly key: ParsedKey;
  readonly type: "put" | "delete";
  readonly revision: Revision;
  /** The record before the change, if there was one. */
  readonly previous?: unknown;
  /** The record after a put. */
  readonly current?: unknown;
}

type Listener = (change: StateChange) => void;

const replicaKey = (workloadId: string, index: number) => `${workloadId}/${index}`;
const EMPTY: ReadonlySet<number> = new Set();
type ReplicaMap = Map<string, Versioned<unknown>>;
const perReplica = (kind: ParsedKey["kind"]) => kind === "assignment" || kind === "pending" || kind === "status";

/**
 * An in-memory copy of the control plane's records, loaded with one range read and kept current by
 * one watch from that read's revision (no gaps, no duplicates). Every server keeps one: API reads are
 * served from it, and the leader drives scheduling and reconciliation from its change feed.
 * `waitFor(revision)` gives read-your-writes: after a write, wait for its revision before reading.
 */
export class ClusterState {
  readonly workloads = new Map<string, Versioned<WorkloadRecord>>();
  readonly assignments = new Map<string, Versioned<AssignmentRecord>>();
  readonly pending = new Map<string, Versioned<PendingRecord>>();
  readonly statuses = new Map<string, Versioned<ReplicaStatusRecord>>();
  readonly nodes = new Map<string, Versioned<NodeRecord>>();
  readonly liveness = new Map<string, Versioned<LivenessRecord>>();
  readonly strays = new Map<string, Versioned<StrayRecord>>();
  /** Secrets by name: metadata and the sealed envelope only (see secrets/secret-store.ts). */
  readonly secrets = new Map<string, Versioned<SecretRecord>>();
  /** The leader election key's value (`{id, since}`), keyed "leader". */
  readonly leader = new Map<string, Versioned<{ id: string; since: string }>>();
  /** Assignment keys (`workload/index`) per node. */
  private readonly byNode = new Map<string, Set<string>>();
  /** Replica indexes per workload, for each per-replica map: keeps per-workload reads O(replicas). */
  private readonly byWorkload = new Map<ReplicaMap, Map<string, Set<number>>>();
  private readonly listeners = new Set<Listener>();
  private readonly waiters: Array<{ revision: Revision; resolve: () => void }> = [];
  private watch: Watch | undefined;
  private rev: Revision = 0;

  constructor(
    private readonly store: StateStore,
    readonly keys: ClusterKeys,
  ) {}

  /** The store revision the cache reflects. */
  get revision(): Revision {
    return this.rev;
  }

  /** Loads every record and starts following changes. */
  async start(onError?: (error: PersysError) => void): Promise<void> {
    let startAfter: string | undefined;
    let revision = 0;
    for (;;) {
      const page = await this.store.range(this.keys.prefix, { limit: 2_000, ...(startAfter ? { startAfter } : {}) });
      // Pages of one scan may see different revisions; the watch from the first page's revision replays
      // whatever changed since, so the cache converges exactly.
      if (revision === 0) revision = page.revision;
      for (const kv of page.kvs) this.applyPut(kv, false);
      if (!page.more) break;
      startAfter = page.kvs.at(-1)?.key;
    }
    this.rev = revision;
    this.watch = await this.store.watch(this.keys.prefix, {
      afterRevision: revision,
      onEvents: (batch) => {
        for (const event of batch.events) {
          if (event.type === "put") this.applyPut(event.kv, true);
          else this.applyDelete(event.key, event.revision);
        }
        this.rev = batch.revision;
        this.releaseWaiters();
      },
      ...(onError ? { onError } : {}),
    });
  }

  async stop(): Promise<void> {
    await this.watch?.cancel();
    this.watch = undefined;
    for (const waiter of this.waiters.splice(0)) waiter.resolve();
  }

  /** Subscribes to changes; returns the unsubscribe function. */
  onChange(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves once the cache reflects `revision` (or at once when it already does). */
  waitFor(revision: Revision, timeoutMs = 10_000): Promise<void> {
    if (this.rev >= revision) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      timer.unref?.();
      this.waiters.push({
        revision,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  assignment(workloadId: string, index: number): Versioned<AssignmentRecord> | undefined {
    return this.assignments.get(replicaKey(workloadId, index));
  }
  pendingOf(workloadId: string, index: number): Versioned<PendingRecord> | undefined {
    return this.pending.get(replicaKey(workloadId, index));
  }
  status(workloadId: string, index: number): Versioned<ReplicaStatusRecord> | undefined {
    return this.statuses.get(replicaKey(workloadId, index));
  }

  /** Assignments of a workload, by index. */
  assignmentsOf(workloadId: string): Versioned<AssignmentRecord>[] {
    const out: Versioned<AssignmentRecord>[] = [];
    for (const index of this.indexesIn(this.assignments, workloadId)) {
      const value = this.assignments.get(replicaKey(workloadId, index));
      if (value) out.push(value);
    }
    return out.sort((a, b) => a.value.index - b.value.index);
  }

  /** Every index of a workload that has an assignment, pending record or status. */
  replicaIndexes(workloadId: string): number[] {
    const indexes = new Set<number>();
    for (const map of [this.assignments, this.pending, this.statuses]) {
      for (const index of this.indexesIn(map, workloadId)) indexes.add(index);
    }
    return [...indexes].sort((a, b) => a - b);
  }

  private indexesIn(map: ReplicaMap, workloadId: string): ReadonlySet<number> {
    return this.byWorkload.get(map)?.get(workloadId) ?? EMPTY;
  }

  private indexReplica(map: ReplicaMap, workloadId: string, index: number, present: boolean): void {
    const perWorkload = this.byWorkload.get(map) ?? new Map<string, Set<number>>();
    this.byWorkload.set(map, perWorkload);
    const indexes = perWorkload.get(workloadId);
    if (present) {
      if (indexes) indexes.add(index);
      else perWorkload.set(workloadId, new Set([index]));
    } else if (indexes) {
      indexes.delete(index);
      if (indexes.size === 0) perWorkload.delete(workloadId);
    }
  }

  /** Assignments on a node. */
  assignmentsOn(nodeId: string): Versioned<AssignmentRecord>[] {
    return [...(this.byNode.get(nodeId) ?? [])].map((key) => this.assignments.get(key)!).filter(Boolean);
  }

  /** The current leader's id, or "" when there is none. */
  get leaderId(): string {
    return this.leader.get("leader")?.value.id ?? "";
  }

  isLive(nodeId: string): boolean {
    return this.liveness.has(nodeId);
  }

  private releaseWaiters(): void {
    let kept = 0;
    for (const waiter of this.waiters) {
      if (waiter.revision <= this.rev) waiter.resolve();
      else this.waiters[kept++] = waiter;
    }
    this.waiters.length = kept;
  }

  private target(parsed: ParsedKey): { map: Map<string, Versioned<unknown>>; id: string } | undefined {
    switch (parsed.kind) {
      case "workload":
        return { map: this.workloads, id: parsed.workloadId! };
      case "assignment":
        return { map: this.assignments, id: replicaKey(parsed.workloadId!, parsed.index!) };
      case "pending":
        return { map: this.pending, id: replicaKey(parsed.workloadId!, parsed.index!) };
      case "status":
        return { map: this.statuses, id: replicaKey(parsed.workloadId!, parsed.index!) };
      case "node":
        return { map: this.nodes, id: parsed.nodeId! };
      case "liveness":
        return { map: this.liveness, id: parsed.nodeId! };
      case "stray":
        return { map: this.strays, id: `${parsed.nodeId}/${replicaKey(parsed.workloadId!, parsed.index!)}` };
      case "secret":
        return { map: this.secrets, id: parsed.secretName! };
      case "leader":
        return { map: this.leader, id: "leader" };
    }
  }

  private applyPut(kv: KeyValue, notify: boolean): void {
    const parsed = this.keys.parse(kv.key);
    if (!parsed) return;
    const target = this.target(parsed);
    if (!target) return;
    let value: unknown;
    try {
      value = decodeRecord(kv.value);
    } catch {
      return; // A malformed record is skipped, never crashes the cache.
    }
    const previous = target.map.get(target.id)?.value;
    target.map.set(target.id, { value, modRevision: kv.modRevision, createRevision: kv.createRevision });
    if (parsed.kind === "assignment")
      this.indexAssignment(target.id, previous as AssignmentRecord, value as AssignmentRecord);
    if (perReplica(parsed.kind)) this.indexReplica(target.map, parsed.workloadId!, parsed.index!, true);
    if (notify) this.emit({ key: parsed, type: "put", revision: kv.modRevision, previous, current: value });
  }

  private applyDelete(key: string, revision: Revision): void {
    const parsed = this.keys.parse(key);
    if (!parsed) return;
    const target = this.target(parsed);
    if (!target) return;
    const previous = target.map.get(target.id)?.value;
    target.map.delete(target.id);
    if (parsed.kind === "assignment") this.indexAssignment(target.id, previous as AssignmentRecord, undefined);
    if (perReplica(parsed.kind)) this.indexReplica(target.map, parsed.workloadId!, parsed.index!, false);
    this.emit({ key: parsed, type: "delete", revision, previous });
  }

  private indexAssignment(id: string, previous: AssignmentRecord | undefined, current: AssignmentRecord | undefined) {
    if (previous) this.byNode.get(previous.nodeId)?.delete(id);
    if (current) {
      const set = this.byNode.get(current.nodeId) ?? new Set<string>();
      this.byNode.set(current.nodeId, set);
      set.add(id);
    }
  }

  private emit(change: StateChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch {
        // A listener's failure must not stop the feed for the others.
      }
    }
  }
}
