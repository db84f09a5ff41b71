import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { PersysError } from "@persys/schema";
import Database from "better-sqlite3";
import type { DesiredReplica } from "../replicas/desired-replica.js";

/** A stored replica: what is desired, plus the runtime restarts the agent itself made. */
export interface StoredReplica {
  readonly replica: DesiredReplica;
  /** Restarts the agent made (restart policy after a stop Docker will not undo, e.g. `docker kill`). */
  readonly agentRestarts: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

const SCHEMA_VERSION = 1;

/**
 * The agent's durable state: one row per desired replica in SQLite (`<stateDir>/agent.db`, WAL,
 * synchronous FULL), so desired replicas survive an agent crash or restart. Writes are synchronous
 * and atomic per call; a write that fails (full disk, read-only file system) throws STORAGE_ERROR
 * and leaves the previous row in place.
 */
export class ReplicaStore {
  private readonly db: Database.Database;
  private readonly upsert: Database.Statement;
  private readonly setRestarts: Database.Statement;
  private readonly remove: Database.Statement;

  private constructor(db: Database.Database) {
    this.db = db;
    this.upsert = db.prepare(
      `INSERT INTO replicas (id, spec, agent_restarts, created_at, updated_at) VALUES (@id, @spec, 0, @now, @now)
       ON CONFLICT(id) DO UPDATE SET spec = excluded.spec, updated_at = excluded.updated_at,
         agent_restarts = CASE WHEN json_extract(replicas.spec, '$.revision') = json_extract(excluded.spec, '$.revision')
                               THEN replicas.agent_restarts ELSE 0 END`,
    );
    this.setRestarts = db.prepare("UPDATE replicas SET agent_restarts = ? WHERE id = ?");
    this.remove = db.prepare("DELETE FROM replicas WHERE id = ?");
  }

  /** Opens (creating when needed) the store in `stateDir`. STORAGE_ERROR when it cannot. */
  static open(stateDir: string): ReplicaStore {
    try {
      mkdirSync(stateDir, { recursive: true });
      const db = new Database(join(stateDir, "agent.db"));
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = FULL");
      db.pragma("busy_timeout = 5000");
      db.exec(`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS replicas (
          id TEXT PRIMARY KEY, spec TEXT NOT NULL, agent_restarts INTEGER NOT NULL DEFAULT 0,
          created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)`);
      const version = db.prepare("SELECT value FROM meta WHERE key = 'schema'").get() as { value: string } | undefined;
      if (!version) db.prepare("INSERT INTO meta (key, value) VALUES ('schema', ?)").run(String(SCHEMA_VERSION));
      else if (Number(version.value) > SCHEMA_VERSION) {
        throw new Error(`state was written by a newer agent (schema ${version.value} > ${SCHEMA_VERSION})`);
      }
      return new ReplicaStore(db);
    } catch (cause) {
      throw new PersysError(
        "STORAGE_ERROR",
        `cannot open the agent state in ${stateDir}: ${(cause as Error).message}`,
        {
          cause,
          retryable: false,
        },
      );
    }
  }

  /** Every stored replica. */
  all(): StoredReplica[] {
    const rows = this.db.prepare("SELECT * FROM replicas ORDER BY id").all() as {
      spec: string;
      agent_restarts: number;
      created_at: number;
      updated_at: number;
    }[];
    return rows.map((row) => ({
      replica: JSON.parse(row.spec) as DesiredReplica,
      agentRestarts: row.agent_restarts,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    }));
  }

  /** Records the desired replica (insert or replace). Agent restarts reset when the revision changes. */
  put(replica: DesiredReplica, now = Date.now()): void {
    this.write(() => this.upsert.run({ id: replica.id, spec: JSON.stringify(replica), now }));
  }

  /** Records how many restarts the agent made for the replica's current container. */
  recordRestarts(id: string, count: number): void {
    this.write(() => this.setRestarts.run(count, id));
  }

  /** Forgets a replica. Idempotent. */
  delete(id: string): void {
    this.write(() => this.remove.run(id));
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  private write(run: () => unknown): void {
    try {
      run();
    } catch (cause) {
      throw new PersysError("STORAGE_ERROR", `cannot write the agent state: ${(cause as Error).message}`, { cause });
    }
  }
}
