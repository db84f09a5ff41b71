/**
 * The SQLite schema of the embedded event store (one file, `events.sqlite`, in the data folder).
 * Every table is WITHOUT ROWID and keyed the way it is read, so reads and trims are index ranges.
 * Per-key metadata (last id, length, point count, expiry) lives in its own row so appends and trims
 * never count rows.
 */

import { PersysError } from "@persys/schema";
import type { Database, Statement } from "better-sqlite3";

/** The schema version this code writes (`PRAGMA user_version`). */
export const SCHEMA_VERSION = 1;

const ddl = `
CREATE TABLE IF NOT EXISTS streams (
  name TEXT PRIMARY KEY,
  last_ms INTEGER NOT NULL,
  last_seq INTEGER NOT NULL,
  length INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS streams_by_expiry ON streams (expires_at);
CREATE TABLE IF NOT EXISTS entries (
  stream TEXT NOT NULL,
  ms INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  fields TEXT NOT NULL,
  payload TEXT,
  PRIMARY KEY (stream, ms, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS counters (
  name TEXT PRIMARY KEY,
  value INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS counters_by_expiry ON counters (expires_at);
CREATE TABLE IF NOT EXISTS series (
  name TEXT PRIMARY KEY,
  points INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS series_by_expiry ON series (expires_at);
CREATE TABLE IF NOT EXISTS samples (
  series TEXT NOT NULL,
  ts INTEGER NOT NULL,
  value REAL NOT NULL,
  PRIMARY KEY (series, ts)
) WITHOUT ROWID;
`;

/**
 * Sets durability (WAL, synchronous NORMAL: survives a process crash; a power loss may lose the
 * last transactions) and caching, and creates the tables. Refuses a file written by a newer schema.
 */
export function prepareSchema(db: Database, file: string): void {
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("busy_timeout = 5000");
  // Events of thousands of workloads land on as many leaf pages per commit: a page cache of 64 MiB
  // (default 2 MiB), reads through mmap, and checkpoints every 10,000 WAL pages (default 1,000)
  // cut the worker's CPU per event (5,000-node bench: 0.69 -> 0.65 ms of control-plane CPU per
  // placement, docs/scheduler-performance.md).
  db.pragma("cache_size = -65536");
  db.pragma(`mmap_size = ${256 * 1024 * 1024}`);
  db.pragma("wal_autocheckpoint = 10000");
  const version = db.pragma("user_version", { simple: true }) as number;
  if (version > SCHEMA_VERSION)
    throw new PersysError(
      "STORAGE_ERROR",
      `${file} has event store schema ${version}; this version understands up to ${SCHEMA_VERSION}`,
      { retryable: false },
    );
  db.exec(ddl);
  db.pragma(`user_version = ${SCHEMA_VERSION}`);
}

interface StreamRow {
  last_ms: number;
  last_seq: number;
  length: number;
  expires_at: number;
}
interface EntryRow {
  ms: number;
  seq: number;
  fields: string;
  payload: string | null;
}
interface CounterRow {
  value: number;
  expires_at: number;
}
interface SeriesRow {
  points: number;
  expires_at: number;
}
interface SampleRow {
  ts: number;
  value: number;
}

/** The prepared statements, by what they do. */
export interface Statements {
  readonly stream: Statement<[string], StreamRow>;
  readonly upsertStream: Statement<[string, number, number, number, number]>;
  readonly purgeEntries: Statement<[string]>;
  readonly insertEntry: Statement<[string, number, number, string, string | null]>;
  readonly trimEntriesBefore: Statement<[string, number]>;
  readonly trimOldestEntries: Statement<[string, string, number]>;
  readonly readForward: Statement<[string, number, number, number, number, number], EntryRow>;
  readonly readReverse: Statement<[string, number, number, number, number, number], EntryRow>;
  readonly counter: Statement<[string], CounterRow>;
  readonly upsertCounter: Statement<[string, number, number]>;
  readonly series: Statement<[string], SeriesRow>;
  readonly upsertSeries: Statement<[string, number, number]>;
  readonly purgeSamples: Statement<[string]>;
  readonly sampleExists: Statement<[string, number], { found: number }>;
  readonly upsertSample: Statement<[string, number, number]>;
  readonly trimSamplesBefore: Statement<[string, number]>;
  readonly trimOldestSamples: Statement<[string, string, number]>;
  readonly rangeSamples: Statement<[string, number, number], SampleRow>;
  readonly sweepEntries: Statement<[number]>;
  readonly sweepStreams: Statement<[number]>;
  readonly sweepCounters: Statement<[number]>;
  readonly sweepSamples: Statement<[number]>;
  readonly sweepSeries: Statement<[number]>;
}

/** Prepares every statement of {@link Statements} on `db`. */
export function prepareStatements(db: Database): Statements {
  return {
    stream: db.prepare("SELECT last_ms, last_seq, length, expires_at FROM streams WHERE name = ?"),
    upsertStream: db.prepare(`INSERT INTO streams (name, last_ms, last_seq, length, expires_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET last_ms = excluded.last_ms, last_seq = excluded.last_seq,
         length = excluded.length, expires_at = excluded.expires_at`),
    purgeEntries: db.prepare("DELETE FROM entries WHERE stream = ?"),
    insertEntry: db.prepare("INSERT INTO entries (stream, ms, seq, fields, payload) VALUES (?, ?, ?, ?, ?)"),
    trimEntriesBefore: db.prepare("DELETE FROM entries WHERE stream = ? AND ms < ?"),
    trimOldestEntries: db.prepare(`DELETE FROM entries WHERE stream = ? AND (ms, seq) IN
         (SELECT ms, seq FROM entries WHERE stream = ? ORDER BY ms, seq LIMIT ?)`),
    readForward: db.prepare(`SELECT ms, seq, fields, payload FROM entries
       WHERE stream = ? AND (ms, seq) >= (?, ?) AND (ms, seq) <= (?, ?) ORDER BY ms, seq LIMIT ?`),
    readReverse: db.prepare(`SELECT ms, seq, fields, payload FROM entries
       WHERE stream = ? AND (ms, seq) >= (?, ?) AND (ms, seq) <= (?, ?) ORDER BY ms DESC, seq DESC LIMIT ?`),
    counter: db.prepare("SELECT value, expires_at FROM counters WHERE name = ?"),
    upsertCounter: db.prepare(`INSERT INTO counters (name, value, expires_at) VALUES (?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`),
    series: db.prepare("SELECT points, expires_at FROM series WHERE name = ?"),
    upsertSeries: db.prepare(`INSERT INTO series (name, points, expires_at) VALUES (?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET points = excluded.points, expires_at = excluded.expires_at`),
    purgeSamples: db.prepare("DELETE FROM samples WHERE series = ?"),
    sampleExists: db.prepare("SELECT 1 AS found FROM samples WHERE series = ? AND ts = ?"),
    upsertSample: db.prepare(`INSERT INTO samples (series, ts, value) VALUES (?, ?, ?)
       ON CONFLICT (series, ts) DO UPDATE SET value = excluded.value`),
    trimSamplesBefore: db.prepare("DELETE FROM samples WHERE series = ? AND ts < ?"),
    trimOldestSamples: db.prepare(
      "DELETE FROM samples WHERE series = ? AND ts IN (SELECT ts FROM samples WHERE series = ? ORDER BY ts LIMIT ?)",
    ),
    rangeSamples: db.prepare("SELECT ts, value FROM samples WHERE series = ? AND ts >= ? AND ts <= ? ORDER BY ts"),
    sweepEntries: db.prepare("DELETE FROM entries WHERE stream IN (SELECT name FROM streams WHERE expires_at <= ?)"),
    sweepStreams: db.prepare("DELETE FROM streams WHERE expires_at <= ?"),
    sweepCounters: db.prepare("DELETE FROM counters WHERE expires_at <= ?"),
    sweepSamples: db.prepare("DELETE FROM samples WHERE series IN (SELECT name FROM series WHERE expires_at <= ?)"),
    sweepSeries: db.prepare("DELETE FROM series WHERE expires_at <= ?"),
  };
}
