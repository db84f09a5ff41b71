import type Database from "better-sqlite3";
import type { KeyRange } from "../key-range.js";
import type { KeyValue, LeaseId, WatchEvent } from "../state-store.js";

/** A `kv` row as SQLite returns it. */
export interface KvRow {
  key: Buffer;
  value: Buffer;
  create_revision: number;
  mod_revision: number;
  version: number;
  lease: string | null;
}

/** A `history` row. */
export interface HistoryRow {
  revision: number;
  sub: number;
  deleted: number;
  key: Buffer;
  value: Buffer | null;
  create_revision: number;
  version: number;
  lease: string | null;
}

const EMPTY = Buffer.alloc(0);

export function toKeyValue(row: KvRow, keysOnly = false): KeyValue {
  return {
    key: row.key.toString("utf8"),
    value: keysOnly ? EMPTY : row.value,
    createRevision: row.create_revision,
    modRevision: row.mod_revision,
    version: row.version,
    ...(row.lease === null ? {} : { lease: row.lease }),
  };
}

export function toWatchEvent(row: HistoryRow): WatchEvent {
  const key = row.key.toString("utf8");
  if (row.deleted) return { type: "delete", key, revision: row.revision };
  return {
    type: "put",
    key,
    revision: row.revision,
    kv: {
      key,
      value: row.value ?? EMPTY,
      createRevision: row.create_revision,
      modRevision: row.revision,
      version: row.version,
      ...(row.lease === null ? {} : { lease: row.lease }),
    },
  };
}

/**
 * The prepared statements over the embedded store's tables. Every method runs synchronously on the one
 * connection; callers group writes in a SQLite transaction.
 */
export class KvTables {
  private readonly getMeta: Database.Statement<[string], number>;
  private readonly setMeta: Database.Statement<[number, string]>;
  private readonly getRow: Database.Statement<[Buffer], KvRow>;
  private readonly upsertRow: Database.Statement<[Buffer, Buffer, number, number, number, string | null]>;
  private readonly deleteRow: Database.Statement<[Buffer]>;
  private readonly rangeBounded: Database.Statement<[Buffer, Buffer, number], KvRow>;
  private readonly rangeOpen: Database.Statement<[Buffer, number], KvRow>;
  private readonly countBounded: Database.Statement<[Buffer, Buffer], number>;
  private readonly countOpen: Database.Statement<[Buffer], number>;
  private readonly insertHistory: Database.Statement<
    [number, number, number, Buffer, Buffer | null, number, number, string | null]
  >;
  private readonly historyBounded: Database.Statement<[number, Buffer, Buffer], HistoryRow>;
  private readonly historyOpen: Database.Statement<[number, Buffer], HistoryRow>;
  private readonly dropHistory: Database.Statement<[number]>;
  private readonly leaseKeys: Database.Statement<[string], KvRow>;
  private readonly leaseRows: Database.Statement<[], { id: string; ttl: number }>;
  private readonly insertLease: Database.Statement<[string, number]>;
  private readonly deleteLease: Database.Statement<[string]>;
  private readonly leaseExists: Database.Statement<[string], number>;

  constructor(db: Database.Database) {
    this.getMeta = db.prepare<[string], number>("SELECT value FROM meta WHERE name = ?").pluck();
    this.setMeta = db.prepare("UPDATE meta SET value = ? WHERE name = ?");
    this.getRow = db.prepare("SELECT * FROM kv WHERE key = ?");
    this.upsertRow = db.prepare(
      `INSERT INTO kv (key, value, create_revision, mod_revision, version, lease) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET value = excluded.value, create_revision = excluded.create_revision,
         mod_revision = excluded.mod_revision, version = excluded.version, lease = excluded.lease`,
    );
    this.deleteRow = db.prepare("DELETE FROM kv WHERE key = ?");
    this.rangeBounded = db.prepare("SELECT * FROM kv WHERE key >= ? AND key < ? ORDER BY key LIMIT ?");
    this.rangeOpen = db.prepare("SELECT * FROM kv WHERE key >= ? ORDER BY key LIMIT ?");
    this.countBounded = db
      .prepare<[Buffer, Buffer], number>("SELECT COUNT(*) FROM kv WHERE key >= ? AND key < ?")
      .pluck();
    this.countOpen = db.prepare<[Buffer], number>("SELECT COUNT(*) FROM kv WHERE key >= ?").pluck();
    this.insertHistory = db.prepare(
      `INSERT INTO history (revision, sub, deleted, key, value, create_revision, version, lease)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.historyBounded = db.prepare(
      "SELECT * FROM history WHERE revision > ? AND key >= ? AND key < ? ORDER BY revision, sub",
    );
    this.historyOpen = db.prepare("SELECT * FROM history WHERE revision > ? AND key >= ? ORDER BY revision, sub");
    this.dropHistory = db.prepare("DELETE FROM history WHERE revision < ?");
    this.leaseKeys = db.prepare("SELECT * FROM kv WHERE lease = ? ORDER BY key");
    this.leaseRows = db.prepare("SELECT id, ttl FROM leases");
    this.insertLease = db.prepare("INSERT INTO leases (id, ttl) VALUES (?, ?)");
    this.deleteLease = db.prepare("DELETE FROM leases WHERE id = ?");
    this.leaseExists = db.prepare<[string], number>("SELECT COUNT(*) FROM leases WHERE id = ?").pluck();
  }

  revision(): number {
    return this.getMeta.get("revision")!;
  }

  setRevision(revision: number): void {
    this.setMeta.run(revision, "revision");
  }

  compactRevision(): number {
    return this.getMeta.get("compact")!;
  }

  /** Deletes history rows before `revision` and records it as the oldest kept. */
  compact(revision: number): void {
    this.dropHistory.run(revision);
    this.setMeta.run(revision, "compact");
  }

  get(key: Buffer): KvRow | undefined {
    return this.getRow.get(key);
  }

  upsert(row: KvRow): void {
    this.upsertRow.run(row.key, row.value, row.create_revision, row.mod_revision, row.version, row.lease);
  }

  delete(key: Buffer): void {
    this.deleteRow.run(key);
  }

  /** Up to `limit` rows of the range in key order (`limit` -1: all). */
  range(range: KeyRange, limit: number): KvRow[] {
    return range.end ? this.rangeBounded.all(range.start, range.end, limit) : this.rangeOpen.all(range.start, limit);
  }

  count(range: KeyRange): number {
    return range.end ? this.countBounded.get(range.start, range.end)! : this.countOpen.get(range.start)!;
  }

  appendHistory(row: HistoryRow): void {
    this.insertHistory.run(
      row.revision,
      row.sub,
      row.deleted,
      row.key,
      row.value,
      row.create_revision,
      row.version,
      row.lease,
    );
  }

  /** History rows of the range after `afterRevision`, in (revision, sub) order. */
  historyAfter(afterRevision: number, range: KeyRange): HistoryRow[] {
    return range.end
      ? this.historyBounded.all(afterRevision, range.start, range.end)
      : this.historyOpen.all(afterRevision, range.start);
  }

  keysOfLease(lease: LeaseId): KvRow[] {
    return this.leaseKeys.all(lease);
  }

  leases(): { id: string; ttl: number }[] {
    return this.leaseRows.all();
  }

  addLease(id: LeaseId, ttl: number): void {
    this.insertLease.run(id, ttl);
  }

  removeLease(id: LeaseId): void {
    this.deleteLease.run(id);
  }

  hasLease(id: LeaseId): boolean {
    return this.leaseExists.get(id)! > 0;
  }
}
