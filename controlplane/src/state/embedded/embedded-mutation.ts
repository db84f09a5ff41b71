import { prefixRange } from "../key-range.js";
import type { Compare, KeyValue, LeaseId, TxnOp, TxnOpResult, WatchEvent } from "../state-store.js";
import { leaseNotFound } from "../state-store-errors.js";
import { asBuffer } from "../value-codec.js";
import { type KvRow, type KvTables, toKeyValue, toWatchEvent } from "./kv-tables.js";

/**
 * The writes of one revision, applied inside one SQLite transaction. Every change gets the same revision
 * (the store revision plus one) and the next sub-revision, and is recorded in `history` for watches; the
 * store revision is bumped by `finish()` only if something changed. Throwing aborts the SQLite
 * transaction, so nothing of the revision is written.
 */
export class Mutation {
  /** The revision every write of this mutation carries. */
  readonly revision: number;
  /** The changes, in order, for watchers (published after commit). */
  readonly events: WatchEvent[] = [];
  /** The key bytes of each event (for prefix matching). */
  readonly keys: Buffer[] = [];
  private sub = 0;

  constructor(
    private readonly tables: KvTables,
    private readonly leaseAlive: (lease: LeaseId) => boolean,
  ) {
    this.revision = tables.revision() + 1;
  }

  get(key: string): KeyValue | undefined {
    const row = this.tables.get(Buffer.from(key, "utf8"));
    return row && toKeyValue(row);
  }

  /** Creates or replaces `key`; `leasePath` names the lease field in the NOT_FOUND error. */
  put(key: string, value: Uint8Array, lease: LeaseId | undefined, leasePath: string): KvRow | undefined {
    if (lease !== undefined && !this.leaseAlive(lease)) {
      throw leaseNotFound(lease, leasePath);
    }
    const keyBytes = Buffer.from(key, "utf8");
    const previous = this.tables.get(keyBytes);
    const row: KvRow = {
      key: keyBytes,
      value: Buffer.from(asBuffer(value)),
      create_revision: previous ? previous.create_revision : this.revision,
      mod_revision: this.revision,
      version: previous ? previous.version + 1 : 1,
      lease: lease ?? null,
    };
    this.tables.upsert(row);
    this.record(row, false);
    return previous;
  }

  /** Deletes `key`, or every key with the prefix `key`; returns the deleted rows in key order. */
  delete(key: string, prefix: boolean): KvRow[] {
    const keyBytes = Buffer.from(key, "utf8");
    const rows = prefix ? this.tables.range(prefixRange(keyBytes), -1) : [this.tables.get(keyBytes)];
    const deleted = rows.filter((row): row is KvRow => row !== undefined);
    for (const row of deleted) {
      this.tables.delete(row.key);
      this.record(row, true);
    }
    return deleted;
  }

  /** Deletes the keys attached to `lease` (in key order) and the lease itself. */
  revokeLease(lease: LeaseId): void {
    for (const row of this.tables.keysOfLease(lease)) {
      this.tables.delete(row.key);
      this.record(row, true);
    }
    this.tables.removeLease(lease);
  }

  /** Whether every compare holds, with etcd's rules for missing keys. */
  compare(compares: readonly Compare[]): boolean {
    return compares.every((c) => holds(c, this.tables.get(Buffer.from(c.key, "utf8"))));
  }

  /** Applies one transaction op at `path` (for error details). */
  apply(op: TxnOp, path: string): TxnOpResult {
    switch (op.type) {
      case "put": {
        const previous = this.put(op.key, op.value, op.lease, `${path}.lease`);
        return {
          type: "put",
          revision: this.revision,
          ...(op.prevKv && previous ? { prevKv: toKeyValue(previous) } : {}),
        };
      }
      case "delete": {
        const rows = this.delete(op.key, op.prefix === true);
        return {
          type: "delete",
          deleted: rows.length,
          ...(op.prevKv ? { prevKvs: rows.map((row) => toKeyValue(row)) } : {}),
        };
      }
      case "get":
        return { type: "get", kv: this.get(op.key) };
    }
  }

  /** Records the new revision if anything changed; returns the store revision after this mutation. */
  finish(): number {
    if (this.events.length === 0) return this.revision - 1;
    this.tables.setRevision(this.revision);
    return this.revision;
  }

  private record(row: KvRow, deleted: boolean): void {
    const history = {
      revision: this.revision,
      sub: this.sub++,
      deleted: deleted ? 1 : 0,
      key: row.key,
      value: deleted ? null : row.value,
      create_revision: deleted ? 0 : row.create_revision,
      version: deleted ? 0 : row.version,
      lease: deleted ? null : row.lease,
    };
    this.tables.appendHistory(history);
    this.events.push(toWatchEvent(history));
    this.keys.push(row.key);
  }
}

function holds(compare: Compare, row: KvRow | undefined): boolean {
  if (compare.target === "value") {
    // etcd: comparing the value of a missing key is always false, whatever the operator.
    if (!row) return false;
    return test(Buffer.compare(row.value, asBuffer(compare.value)), compare.op);
  }
  const actual = !row
    ? 0
    : compare.target === "version"
      ? row.version
      : compare.target === "createRevision"
        ? row.create_revision
        : row.mod_revision;
  return test(Math.sign(actual - compare.value), compare.op);
}

function test(order: number, op: Compare["op"]): boolean {
  switch (op) {
    case "=":
      return order === 0;
    case "!=":
      return order !== 0;
    case "<":
      return order < 0;
    case ">":
      return order > 0;
  }
}
