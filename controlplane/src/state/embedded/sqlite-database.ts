import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { PersysError } from "@persys/schema";
import Database from "better-sqlite3";

/** Version of the on-disk layout below; a data dir written by a newer layout is refused. */
export const SCHEMA_VERSION = 1;

/** The database file inside the data dir. */
export const DATABASE_FILE = "state.db";

/**
 * Opens (creating if needed) the embedded store's SQLite database in `dataDir`.
 *
 * Durability: WAL journal with `synchronous=FULL`, so every commit fsyncs the WAL before it returns; an
 * acknowledged write survives the process being killed and the machine losing power (given a disk that
 * honours fsync). Exclusion: `locking_mode=EXCLUSIVE` takes the file lock on the first access and holds it
 * until close, so a second process (or a second store in this process) cannot open the same data dir; it
 * fails with STORAGE_ERROR instead of corrupting lease timers and watch notifications.
 *
 * Tables:
 * - `meta(name, value)`: `schema`, `revision` (current store revision), `compact` (oldest kept history rev).
 * - `kv`: the current value of each key with its create/mod revision, version and lease.
 * - `history`: one row per change `(revision, sub)` for watches; rows before `compact` are deleted.
 * - `leases(id, ttl)`: live leases; deadlines are kept in memory and restart at a full TTL on open.
 */
export function openDatabase(dataDir: string): Database.Database {
  let db: Database.Database | undefined;
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    db = new Database(join(dataDir, DATABASE_FILE), { timeout: 2000 });
    db.pragma("locking_mode = EXCLUSIVE");
    const mode = db.pragma("journal_mode = WAL", { simple: true });
    if (String(mode).toLowerCase() !== "wal") throw new Error(`journal_mode is ${String(mode)}, not wal`);
    db.pragma("synchronous = FULL");
    db.pragma("foreign_keys = OFF");
    createSchema(db);
    return db;
  } catch (error) {
    db?.close();
    throw storageError(error, `cannot open the embedded state store in ${dataDir}`);
  }
}

function createSchema(db: Database.Database): void {
  db.transaction(() => {
    db.exec(`
      CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS kv (
        key BLOB PRIMARY KEY,
        value BLOB NOT NULL,
        create_revision INTEGER NOT NULL,
        mod_revision INTEGER NOT NULL,
        version INTEGER NOT NULL,
        lease TEXT
      ) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS kv_by_lease ON kv (lease, key) WHERE lease IS NOT NULL;
      CREATE TABLE IF NOT EXISTS history (
        revision INTEGER NOT NULL,
        sub INTEGER NOT NULL,
        deleted INTEGER NOT NULL,
        key BLOB NOT NULL,
        value BLOB,
        create_revision INTEGER NOT NULL,
        version INTEGER NOT NULL,
        lease TEXT,
        PRIMARY KEY (revision, sub)
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS leases (id TEXT PRIMARY KEY, ttl INTEGER NOT NULL) WITHOUT ROWID;
    `);
    const insert = db.prepare("INSERT OR IGNORE INTO meta (name, value) VALUES (?, ?)");
    insert.run("schema", SCHEMA_VERSION);
    insert.run("revision", 1);
    insert.run("compact", 0);
    const schema = db.prepare("SELECT value FROM meta WHERE name = 'schema'").pluck().get() as number;
    if (schema > SCHEMA_VERSION) {
      throw new PersysError(
        "STORAGE_ERROR",
        `the data dir was written by a newer Persys (layout ${schema}, this one reads ${SCHEMA_VERSION})`,
        { retryable: false },
      );
    }
  }).immediate();
}

/** Maps a SQLite failure to STORAGE_ERROR (retryable unless the file is corrupt or not a database). */
export function storageError(error: unknown, context: string): PersysError {
  if (error instanceof PersysError) return error;
  const code = typeof (error as { code?: unknown })?.code === "string" ? (error as { code: string }).code : "";
  const message = error instanceof Error ? error.message : String(error);
  if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED" || code.startsWith("SQLITE_BUSY")) {
    return new PersysError(
      "STORAGE_ERROR",
      `${context}: the data dir is in use by another process (${message}); stop it or use another data dir`,
      { cause: error },
    );
  }
  const corrupt = code === "SQLITE_CORRUPT" || code === "SQLITE_NOTADB";
  return new PersysError("STORAGE_ERROR", `${context}: ${code ? `${code}: ` : ""}${message}`, {
    cause: error,
    retryable: !corrupt,
  });
}
