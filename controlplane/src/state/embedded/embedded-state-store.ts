import { randomBytes } from "node:crypto";
import { invalid } from "@persys/schema";
import type Database from "better-sqlite3";
import { prefixRange } from "../key-range.js";
import { type KeepAliveLoop, startKeepAliveLoop } from "../lease-keep-alive.js";
import type {
  DeleteOptions,
  DeleteResult,
  KeyValue,
  LeaseGrant,
  LeaseId,
  LeaseKeepAlive,
  LeaseStatus,
  PutOptions,
  PutResult,
  RangeOptions,
  RangeResult,
  Revision,
  RevokeResult,
  StateStore,
  TxnRequest,
  TxnResult,
  Watch,
  WatchOptions,
} from "../state-store.js";
import {
  compactArgument,
  deleteArguments,
  keyArguments,
  leaseArgument,
  putArguments,
  rangeArguments,
  ttlArgument,
  txnArguments,
  watchArguments,
} from "../state-store-arguments.js";
import { compactedError, leaseNotFound, storeClosed } from "../state-store-errors.js";
import { Mutation } from "./embedded-mutation.js";
import { WatchHub } from "./embedded-watch-hub.js";
import { KvTables, toKeyValue, toWatchEvent } from "./kv-tables.js";
import { openDatabase, storageError } from "./sqlite-database.js";

export interface EmbeddedStateStoreOptions {
  /** Folder holding `state.db` (created if missing). One store per folder at a time. */
  readonly dataDir: string;
  /** Revisions of history kept for watches to resume from; older ones give COMPACTED. Default 10 000. */
  readonly historyRevisions?: number;
  /** How often expired leases are looked for, in ms (expiry is also checked on every lease use). Default 100. */
  readonly leaseCheckIntervalMs?: number;
}

export const DEFAULT_HISTORY_REVISIONS = 10_000;

/** A mutation's result and the store revision after it (unchanged when it changed nothing). */
interface Committed<T> {
  readonly result: T;
  readonly revision: Revision;
}

interface LiveLease {
  readonly ttl: number;
  /** `performance.now()` after which the lease is expired. */
  deadline: number;
}

/**
 * The single-node state store on local disk (SQLite via better-sqlite3), with the same semantics as the
 * etcd store (see `StateStore`). Every operation runs synchronously on one connection inside one SQLite
 * transaction, so operations are serialised and atomic by construction; a write's promise resolves after
 * its commit is fsynced (WAL, synchronous=FULL). History for watches is bounded by `historyRevisions`.
 *
 * Lease deadlines are kept in memory: on open every lease restarts with its full TTL (as etcd does when a
 * leader starts), so holders get one TTL to renew after the control plane restarts.
 */
export class EmbeddedStateStore implements StateStore {
  readonly kind = "embedded" as const;
  private readonly tables: KvTables;
  private readonly hub = new WatchHub();
  private readonly leases = new Map<LeaseId, LiveLease>();
  private readonly keepAlives = new Set<KeepAliveLoop>();
  private readonly historyRevisions: number;
  private readonly sweep: NodeJS.Timeout;
  private nextDeadline = Number.POSITIVE_INFINITY;
  private closed = false;

  private constructor(
    private readonly db: Database.Database,
    options: EmbeddedStateStoreOptions,
  ) {
    this.tables = new KvTables(db);
    this.historyRevisions = options.historyRevisions ?? DEFAULT_HISTORY_REVISIONS;
    const now = performance.now();
    for (const { id, ttl } of this.tables.leases()) {
      const deadline = now + ttl * 1000;
      this.leases.set(id, { ttl, deadline });
      this.nextDeadline = Math.min(this.nextDeadline, deadline);
    }
    this.sweep = setInterval(() => {
      try {
        this.expireDue();
      } catch {
        // The next sweep (or lease use) retries; the storage failure surfaces on the next write.
      }
    }, options.leaseCheckIntervalMs ?? 100);
    this.sweep.unref();
  }

  /** Opens the store in `options.dataDir`. Fails with STORAGE_ERROR if another process holds it. */
  static async open(options: EmbeddedStateStoreOptions): Promise<EmbeddedStateStore> {
    const history = options.historyRevisions;
    if (history !== undefined && (!Number.isSafeInteger(history) || history < 1)) {
      throw invalid("INVALID_CONFIG", [{ path: "historyRevisions", reason: "must be a positive integer" }]);
    }
    return new EmbeddedStateStore(openDatabase(options.dataDir), options);
  }

  async get(key: string): Promise<KeyValue | undefined> {
    keyArguments(key);
    const row = this.read("get", () => this.tables.get(Buffer.from(key, "utf8")));
    return row && toKeyValue(row);
  }

  async range(prefix: string, options: RangeOptions = {}): Promise<RangeResult> {
    rangeArguments(prefix, options);
    const startAfter = options.startAfter === undefined ? undefined : Buffer.from(options.startAfter, "utf8");
    const range = prefixRange(Buffer.from(prefix, "utf8"), startAfter);
    return this.read("range", () => {
      const revision = this.tables.revision();
      if (range.empty) return { kvs: [], more: false, count: 0, revision };
      const rows = this.tables.range(range, options.limit ?? -1);
      const count = this.tables.count(range);
      const kvs = rows.map((row) => toKeyValue(row, options.keysOnly === true));
      return { kvs, more: count > kvs.length, count, revision };
    });
  }

  async put(key: string, value: Uint8Array, options: PutOptions = {}): Promise<PutResult> {
    putArguments(key, value, options);
    const { result: previous, revision } = await this.write("put", (m) => m.put(key, value, options.lease, "lease"));
    return { revision, ...(options.prevKv && previous ? { prevKv: toKeyValue(previous) } : {}) };
  }

  async delete(key: string, options: DeleteOptions = {}): Promise<DeleteResult> {
    deleteArguments(key, options, "key");
    return this.deleteRange(key, false, options);
  }

  async deletePrefix(prefix: string, options: DeleteOptions = {}): Promise<DeleteResult> {
    deleteArguments(prefix, options, "prefix");
    return this.deleteRange(prefix, true, options);
  }

  async txn(request: TxnRequest): Promise<TxnResult> {
    txnArguments(request);
    const { result, revision } = await this.write("txn", (m) => {
      const succeeded = m.compare(request.compare ?? []);
      const branch = succeeded ? "success" : "failure";
      const ops = (succeeded ? request.success : request.failure) ?? [];
      return { succeeded, results: ops.map((op, i) => m.apply(op, `${branch}[${i}]`)) };
    });
    return { ...result, revision };
  }

  async watch(prefix: string, options: WatchOptions): Promise<Watch> {
    watchArguments(prefix, options);
    const prefixBytes = Buffer.from(prefix, "utf8");
    return this.read("watch", () => {
      const current = this.tables.revision();
      const after = options.afterRevision ?? current;
      const compacted = this.tables.compactRevision();
      if (after + 1 < compacted) throw compactedError(after, compacted);
      const history = after < current ? this.tables.historyAfter(after, prefixRange(prefixBytes)) : [];
      return this.hub.add(prefixBytes, after, current, history.map(toWatchEvent), options);
    });
  }

  async grantLease(ttl: number): Promise<LeaseGrant> {
    ttlArgument(ttl);
    this.ensureOpen();
    const id = this.read("grantLease", () => {
      let candidate = newLeaseId();
      while (this.tables.hasLease(candidate)) candidate = newLeaseId();
      this.db.transaction(() => this.tables.addLease(candidate, ttl)).immediate();
      return candidate;
    });
    const deadline = performance.now() + ttl * 1000;
    this.leases.set(id, { ttl, deadline });
    this.nextDeadline = Math.min(this.nextDeadline, deadline);
    return { id, ttl };
  }

  async keepAliveOnce(lease: LeaseId): Promise<LeaseGrant> {
    leaseArgument(lease);
    this.ensureOpen();
    this.expireDue();
    const live = this.leases.get(lease);
    if (!live) throw leaseNotFound(lease);
    live.deadline = performance.now() + live.ttl * 1000;
    return { id: lease, ttl: live.ttl };
  }

  keepAlive(lease: LeaseId): LeaseKeepAlive {
    leaseArgument(lease);
    this.ensureOpen();
    const loop = startKeepAliveLoop({
      lease,
      renew: (id) => this.keepAliveOnce(id),
      onEnd: () => this.keepAlives.delete(loop),
    });
    this.keepAlives.add(loop);
    return { ended: loop.ended, stop: () => loop.stop() };
  }

  async revokeLease(lease: LeaseId): Promise<RevokeResult> {
    leaseArgument(lease);
    this.ensureOpen();
    this.expireDue();
    if (!this.leases.has(lease)) return { revision: await this.currentRevision(), revoked: false };
    const revision = this.revokeNow(lease);
    return { revision, revoked: true };
  }

  async leaseTimeToLive(lease: LeaseId): Promise<LeaseStatus | undefined> {
    leaseArgument(lease);
    this.ensureOpen();
    this.expireDue();
    const live = this.leases.get(lease);
    if (!live) return undefined;
    const keys = this.read("leaseTimeToLive", () => this.tables.keysOfLease(lease)).map((row) =>
      row.key.toString("utf8"),
    );
    const ttl = Math.max(0, Math.ceil((live.deadline - performance.now()) / 1000));
    return { id: lease, ttl, grantedTtl: live.ttl, keys };
  }

  async currentRevision(): Promise<Revision> {
    return this.read("currentRevision", () => this.tables.revision());
  }

  async compact(revision: Revision): Promise<void> {
    compactArgument(revision);
    this.read("compact", () => {
      const current = this.tables.revision();
      if (revision > current) {
        throw invalid("INVALID_ARGUMENT", [
          { path: "revision", reason: `is a future revision (current revision is ${current})` },
        ]);
      }
      if (revision <= this.tables.compactRevision()) return;
      this.db.transaction(() => this.tables.compact(revision)).immediate();
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweep);
    this.hub.closeAll();
    for (const loop of [...this.keepAlives]) loop.abort(storeClosed());
    this.db.close();
  }

  private async deleteRange(key: string, prefix: boolean, options: DeleteOptions): Promise<DeleteResult> {
    const { result: rows, revision } = await this.write(prefix ? "deletePrefix" : "delete", (m) =>
      m.delete(key, prefix),
    );
    return {
      revision,
      deleted: rows.length,
      ...(options.prevKv ? { prevKvs: rows.map((row) => toKeyValue(row)) } : {}),
    };
  }

  /** Revokes a live lease now (keys deleted at one revision); returns the store revision after it. */
  private revokeNow(lease: LeaseId): Revision {
    const { revision } = this.commit("revokeLease", (m) => m.revokeLease(lease));
    this.leases.delete(lease);
    return revision;
  }

  /** Revokes every lease past its deadline (each its own revision, like etcd). */
  private expireDue(): void {
    const now = performance.now();
    if (this.closed || now < this.nextDeadline) return;
    let next = Number.POSITIVE_INFINITY;
    try {
      for (const [id, lease] of this.leases) {
        if (lease.deadline <= now) this.revokeNow(id);
        else next = Math.min(next, lease.deadline);
      }
    } catch (error) {
      next = 0;
      throw error;
    } finally {
      this.nextDeadline = next;
    }
  }

  /**
   * Group commit: writes requested in the same turn of the event loop are applied in order inside ONE
   * SQLite transaction (each in its own savepoint, with its own revision), so a burst of concurrent
   * writes costs one fsync instead of one each. Each promise resolves only after that durable commit;
   * a write whose own apply throws is rolled back to its savepoint and rejected alone. Due leases are
   * expired first, so a write never sees a lease past its TTL.
   */
  private write<T>(op: string, apply: (m: Mutation) => T): Promise<Committed<T>> {
    this.ensureOpen();
    return new Promise<Committed<T>>((resolve, reject) => {
      this.pending.push({ op, apply, resolve: resolve as (c: Committed<unknown>) => void, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    const batch = this.pending.splice(0);
    if (batch.length === 0) return;
    if (this.closed) {
      for (const item of batch) item.reject(storeClosed());
      return;
    }
    const outcomes: Array<{ mutation: Mutation; result: unknown; revision: Revision } | { error: unknown }> = [];
    const run = this.db.transaction(() => {
      this.expireDue();
      let last = 0;
      for (const item of batch) {
        let mutation: Mutation | undefined;
        const one = this.db.transaction(() => {
          mutation = new Mutation(this.tables, (id) => this.isLive(id));
          const result = item.apply(mutation);
          return { result, revision: mutation.finish() };
        });
        try {
          const { result, revision } = one();
          outcomes.push({ mutation: mutation!, result, revision });
          last = Math.max(last, revision);
        } catch (error) {
          outcomes.push({ error });
        }
      }
      if (last > 0) this.compactHistory(last);
    });
    try {
      run.immediate();
    } catch (error) {
      for (const item of batch) item.reject(storageError(error, `embedded state store ${item.op} failed`));
      return;
    }
    outcomes.forEach((outcome, i) => {
      const item = batch[i]!;
      if ("error" in outcome) {
        item.reject(storageError(outcome.error, `embedded state store ${item.op} failed`));
        return;
      }
      const { mutation, result, revision } = outcome;
      if (mutation.events.length > 0) this.hub.publish(revision, mutation.events, mutation.keys);
      item.resolve({ result, revision });
    });
  }

  private readonly pending: Array<{
    op: string;
    apply: (m: Mutation) => unknown;
    resolve: (committed: Committed<unknown>) => void;
    reject: (error: unknown) => void;
  }> = [];
  private flushScheduled = false;

  /**
   * Applies one mutation in one SQLite transaction, then (after the durable commit) publishes its events.
   * A throw inside `apply` rolls everything back.
   */
  private commit<T>(op: string, apply: (m: Mutation) => T): Committed<T> {
    let mutation: Mutation | undefined;
    let revision = 0;
    const run = this.db.transaction(() => {
      mutation = new Mutation(this.tables, (id) => this.isLive(id));
      const result = apply(mutation);
      revision = mutation.finish();
      this.compactHistory(revision);
      return result;
    });
    let result: T;
    try {
      result = run.immediate();
    } catch (error) {
      throw storageError(error, `embedded state store ${op} failed`);
    }
    if (mutation && mutation.events.length > 0) this.hub.publish(revision, mutation.events, mutation.keys);
    return { result, revision };
  }

  /** Keeps the last `historyRevisions` revisions of history, trimming in steps of an eighth of it. */
  private compactHistory(revision: Revision): void {
    const keepFrom = revision - this.historyRevisions + 1;
    const step = Math.max(1, Math.floor(this.historyRevisions / 8));
    if (keepFrom - this.tables.compactRevision() >= step) this.tables.compact(keepFrom);
  }

  private isLive(lease: LeaseId): boolean {
    const live = this.leases.get(lease);
    return live !== undefined && live.deadline > performance.now();
  }

  private read<T>(op: string, fn: () => T): T {
    this.ensureOpen();
    try {
      return fn();
    } catch (error) {
      throw storageError(error, `embedded state store ${op} failed`);
    }
  }

  private ensureOpen(): void {
    if (this.closed) throw storeClosed();
  }
}

function newLeaseId(): LeaseId {
  const id = randomBytes(8).readBigUInt64BE() & ((1n << 63n) - 1n);
  return id === 0n ? newLeaseId() : id.toString();
}
