import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { PersysError } from "@persys/schema";
import BetterSqlite3, { type Database } from "better-sqlite3";
import { type EventIdParts, formatEventId, MAX_SEQ, nextIdParts } from "../event-id.js";
import {
  type CounterOptions,
  defaultEventRetention,
  type EventAppendOptions,
  type EventId,
  type EventPayload,
  type EventReadOptions,
  type EventRecord,
  type EventRetentionDefaults,
  type EventStore,
  type EventStoreHealth,
  type EventSubscribeOptions,
  type EventSubscription,
  type SeriesSample,
  type SeriesSampleOptions,
  type StoredEvent,
} from "../event-store.js";
import {
  appendArguments,
  appendEachArguments,
  incrArguments,
  nameArgument,
  rangeArguments,
  readArguments,
  sampleArguments,
  subscribeArguments,
} from "../event-store-arguments.js";
import { HealthSignal } from "../health-signal.js";
import { trackedSubscription } from "../pull-subscription.js";
import { prepareSchema, prepareStatements, type Statements } from "./embedded-schema.js";

/** Settings of an {@link EmbeddedEventStore}; all but `dataDir` have defaults. */
export interface EmbeddedEventStoreOptions {
  /** Folder for `events.sqlite` (created when missing). */
  readonly dataDir: string;
  /** Bounds for calls that give none. */
  readonly defaults?: EventRetentionDefaults;
  /** How often expired streams, counters and series are deleted from disk (default 5,000 ms). */
  readonly sweepIntervalMs?: number;
  /**
   * How often a waiting subscription re-reads even without a local append, to see appends made by
   * another process on the same folder (default 1,000 ms).
   */
  readonly pollIntervalMs?: number;
}

const SUBSCRIPTION_BATCH = 256;
/** Group commit: how long the first queued write waits for others, and how many flush at once. */
const FLUSH_AFTER_MS = 5;
const FLUSH_AT_COUNT = 1024;
type AppendArguments = ReturnType<typeof appendArguments>;

/** A stream's state within a transaction that appends to it. */
interface AppendingStream {
  readonly lastMs: number;
  /** -1: the stream has no id yet. */
  readonly lastSeq: number;
  readonly length: number;
  readonly maxLen: number;
  readonly maxAgeMs: number | undefined;
  readonly ttlSeconds: number;
  /** When the last append was made (expiry counts from it). */
  readonly now: number;
}

/**
 * The event store for single-node `persys up`: one SQLite file on local disk (better-sqlite3, WAL),
 * with the semantics of the Redis store: exact caps, age windows and idle expiry (expired data reads
 * as absent at once and is deleted by a periodic sweep), counters, series, and subscriptions woken
 * by appends in this process (and by polling for other processes).
 *
 * Failures: there is no buffering. A write that SQLite refuses (disk full, I/O error) fails with
 * `STORAGE_ERROR` and turns health `degraded` with SQLite's reason until a write succeeds again; a
 * file locked by another process past 5 s fails with `UNAVAILABLE`.
 */
export class EmbeddedEventStore implements EventStore {
  readonly kind = "embedded";
  private readonly db: Database;
  private readonly sql: Statements;
  private readonly healthSignal = new HealthSignal({ state: "ok" });
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly subscriptions = new Set<EventSubscription>();
  private readonly defaults: EventRetentionDefaults;
  private readonly sweeper: NodeJS.Timeout;
  private readonly pollIntervalMs: number;
  private closed = false;
  private flushTimer: NodeJS.Timeout | undefined;
  /** Streams appended to in the running transaction, settled before it commits. */
  private appending: Map<string, AppendingStream> | undefined;
  private readonly writes: Array<{
    what: string;
    work: () => unknown;
    resolve: (value: unknown) => void;
    reject: (error: unknown) => void;
  }> = [];

  private constructor(options: EmbeddedEventStoreOptions) {
    this.defaults = options.defaults ?? defaultEventRetention;
    this.pollIntervalMs = options.pollIntervalMs ?? 1_000;
    const file = join(options.dataDir, "events.sqlite");
    try {
      mkdirSync(options.dataDir, { recursive: true });
      this.db = new BetterSqlite3(file);
    } catch (error) {
      throw new PersysError("STORAGE_ERROR", `cannot open ${file}: ${(error as Error).message}`, {
        cause: error,
        retryable: false,
      });
    }
    try {
      prepareSchema(this.db, file);
      this.sql = prepareStatements(this.db);
    } catch (error) {
      this.db.close();
      if (error instanceof PersysError) throw error;
      throw new PersysError("STORAGE_ERROR", `cannot prepare ${file}: ${(error as Error).message}`, { cause: error });
    }
    this.sweeper = setInterval(() => this.sweep(), options.sweepIntervalMs ?? 5_000);
    this.sweeper.unref();
  }

  /** Opens (creating when missing) the store in `dataDir`; rejects with `STORAGE_ERROR` when it cannot. */
  static async open(options: EmbeddedEventStoreOptions): Promise<EmbeddedEventStore> {
    return new EmbeddedEventStore(options);
  }

  /** Runs `work` on the open database, mapping SQLite failures to typed errors and health. */
  private run<T>(what: string, work: () => T, write = false): T {
    if (this.closed) throw new PersysError("UNAVAILABLE", "event store is closed", { retryable: false });
    try {
      const result = work();
      if (write) this.healthSignal.ok();
      return result;
    } catch (error) {
      if (error instanceof PersysError || !(error instanceof BetterSqlite3.SqliteError)) throw error;
      const message = `event store ${what} failed: SQLite ${error.code}: ${error.message}`;
      if (error.code === "SQLITE_BUSY" || error.code === "SQLITE_LOCKED")
        throw new PersysError("UNAVAILABLE", message, { cause: error });
      this.healthSignal.degraded(message);
      throw new PersysError("STORAGE_ERROR", message, { cause: error });
    }
  }

  async append(stream: string, record: EventRecord, options?: EventAppendOptions): Promise<EventId> {
    const a = appendArguments(stream, record, options, this.defaults);
    const id = await this.write("append", () => this.appendRow(a));
    this.wake(a.stream);
    return id;
  }

  async appendEach(streams: readonly string[], record: EventRecord, options?: EventAppendOptions): Promise<EventId[]> {
    const all = appendEachArguments(streams, record, options, this.defaults);
    const ids = await this.write("append", () => all.map((a) => this.appendRow(a)));
    for (const a of all) this.wake(a.stream);
    return ids;
  }

  /**
   * Writes are group-committed: those made within FLUSH_AFTER_MS of the first one (or the first
   * FLUSH_AT_COUNT) share one SQLite transaction, and each resolves once that transaction committed.
   * A burst of events and usage samples thus costs one commit, not one each, on the control plane's
   * thread, and each stream's row and trims are written once per transaction (see appendRow).
   */
  private write<T>(what: string, work: () => T): Promise<T> {
    this.run(what, () => undefined); // refuses when closed
    return new Promise<T>((resolve, reject) => {
      this.writes.push({ what, work, resolve: resolve as (value: unknown) => void, reject });
      if (this.writes.length === FLUSH_AT_COUNT) {
        clearTimeout(this.flushTimer);
        setImmediate(() => this.flushWrites());
      } else if (this.writes.length === 1) this.flushTimer = setTimeout(() => this.flushWrites(), FLUSH_AFTER_MS);
    });
  }

  private flushWrites(): void {
    clearTimeout(this.flushTimer);
    const batch = this.writes.splice(0);
    if (batch.length === 0) return;
    let results: unknown[];
    try {
      results = this.run("write", () => this.transaction(() => batch.map((w) => w.work())), true);
    } catch {
      // One failing write must not fail the others: commit them one by one to give each its outcome.
      for (const w of batch) {
        try {
          w.resolve(this.run(w.what, () => this.transaction(w.work), true));
        } catch (error) {
          w.reject(error);
        }
      }
      return;
    }
    for (const [i, w] of batch.entries()) w.resolve(results[i]);
  }

  /** Runs `work` in one SQLite transaction, writing the streams it appended to before committing. */
  private transaction<T>(work: () => T): T {
    return this.db.transaction(() => {
      this.appending = new Map();
      try {
        const result = work();
        for (const [name, stream] of this.appending) this.settleStream(name, stream);
        return result;
      } finally {
        this.appending = undefined;
      }
    })();
  }

  /**
   * Appends within the current transaction. The stream's row is read once per transaction and its
   * trims and row written once, at the end (settleStream): ids only grow, so trimming by age and
   * length once after several appends leaves exactly what trimming after each would. Appends with
   * other caps than the previous one settle the stream first.
   */
  private appendRow(a: AppendArguments): EventId {
    const now = Date.now();
    const appending = this.appending!;
    let stream = appending.get(a.stream);
    if (stream && (stream.maxLen !== a.maxLen || stream.maxAgeMs !== a.maxAgeMs)) {
      this.settleStream(a.stream, stream);
      stream = undefined;
    }
    if (!stream) {
      const row = this.sql.stream.get(a.stream);
      let length = row?.length ?? 0;
      if (row && row.expires_at <= now) {
        this.sql.purgeEntries.run(a.stream);
        length = 0;
      }
      stream = {
        lastMs: row?.last_ms ?? 0,
        lastSeq: row ? row.last_seq : -1,
        length,
        maxLen: a.maxLen,
        maxAgeMs: a.maxAgeMs,
        ttlSeconds: a.ttlSeconds,
        now,
      };
    }
    const ms = Math.max(now, stream.lastMs);
    const seq = stream.lastSeq >= 0 && ms === stream.lastMs ? stream.lastSeq + 1 : 0;
    const fields = JSON.stringify(Object.fromEntries(a.fields));
    this.sql.insertEntry.run(a.stream, ms, seq, fields, a.payloadJson ?? null);
    appending.set(a.stream, {
      lastMs: ms,
      lastSeq: seq,
      length: stream.length + 1,
      maxLen: a.maxLen,
      maxAgeMs: a.maxAgeMs,
      ttlSeconds: a.ttlSeconds,
      now,
    });
    return formatEventId({ ms, seq });
  }

  /** Trims a stream appended to in this transaction to its caps and writes its row. */
  private settleStream(name: string, s: AppendingStream): void {
    let length = s.length;
    if (s.maxAgeMs !== undefined) length -= this.sql.trimEntriesBefore.run(name, s.lastMs - s.maxAgeMs).changes;
    if (length > s.maxLen) {
      this.sql.trimOldestEntries.run(name, name, length - s.maxLen);
      length = s.maxLen;
    }
    this.sql.upsertStream.run(name, s.lastMs, s.lastSeq, length, s.now + s.ttlSeconds * 1000);
    this.appending?.delete(name);
  }

  async read(stream: string, options?: EventReadOptions): Promise<StoredEvent[]> {
    const a = readArguments(stream, options);
    return this.run("read", () => (a.empty ? [] : this.readNow(a.stream, a.lo, a.hi, a.limit, a.reverse)));
  }

  private readNow(stream: string, lo: EventIdParts, hi: EventIdParts, limit: number, reverse: boolean): StoredEvent[] {
    const row = this.sql.stream.get(stream);
    if (!row || row.expires_at <= Date.now()) return [];
    const statement = reverse ? this.sql.readReverse : this.sql.readForward;
    return statement.all(stream, lo.ms, lo.seq, hi.ms, hi.seq, limit).map((entry) => {
      const event = {
        stream,
        id: formatEventId(entry),
        timeMs: entry.ms,
        fields: JSON.parse(entry.fields) as Record<string, string>,
      };
      return entry.payload === null ? event : { ...event, payload: JSON.parse(entry.payload) as EventPayload };
    });
  }

  async subscribe(streams: string | readonly string[], options?: EventSubscribeOptions): Promise<EventSubscription> {
    const a = subscribeArguments(streams, options);
    this.run("subscribe", () => undefined); // refuses when closed
    const cursors = a.after ?? this.lastIds(a.streams);
    return trackedSubscription(this.subscriptions, {
      cursors,
      signal: a.signal,
      fetch: (at, signal) => this.fetchAfter(a.streams, at, signal),
    });
  }

  /** Each stream's last id now (0-0 for a missing or expired stream): where a new subscription starts. */
  lastIds(streams: readonly string[]): Map<string, EventIdParts> {
    return this.run("subscribe", () => {
      const now = Date.now();
      return new Map(
        streams.map((name) => {
          const row = this.sql.stream.get(name);
          const live = row && row.expires_at > now;
          return [name, live ? { ms: row.last_ms, seq: row.last_seq } : { ms: 0, seq: 0 }] as const;
        }),
      );
    });
  }

  /**
   * The events after `cursors` in `streams` (up to a batch per stream); when there are none, waits for
   * an append in this process, a poll tick or `signal`, then resolves `[]`. What subscriptions pull.
   */
  fetchAfter(
    streams: readonly string[],
    cursors: ReadonlyMap<string, EventIdParts>,
    signal: AbortSignal,
  ): Promise<StoredEvent[]> {
    if (signal.aborted || this.closed) return Promise.resolve([]);
    const top = { ms: Number.MAX_SAFE_INTEGER, seq: MAX_SEQ };
    const events = this.run("subscription read", () =>
      streams.flatMap((name) =>
        this.readNow(name, nextIdParts(cursors.get(name) ?? { ms: 0, seq: 0 }), top, SUBSCRIPTION_BATCH, false),
      ),
    );
    if (events.length > 0) return Promise.resolve(events);
    // Nothing yet: wait for an append here (registered in the same synchronous step as the read, so
    // none is missed), a poll tick, or the end.
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        for (const name of streams) this.waiters.get(name)?.delete(done);
        resolve([]);
      };
      const timer = setTimeout(done, this.pollIntervalMs);
      signal.addEventListener("abort", done, { once: true });
      for (const name of streams) {
        const set = this.waiters.get(name) ?? new Set();
        this.waiters.set(name, set);
        set.add(done);
      }
    });
  }

  private wake(stream: string): void {
    const set = this.waiters.get(stream);
    if (!set) return;
    this.waiters.delete(stream);
    for (const waiter of set) waiter();
  }

  async incr(key: string, by?: number, options?: CounterOptions): Promise<number> {
    const a = incrArguments(key, by, options, this.defaults);
    return this.write("counter write", () => {
      const now = Date.now();
      const row = this.sql.counter.get(a.key);
      const value = (row && row.expires_at > now ? row.value : 0) + a.by;
      if (!Number.isSafeInteger(value))
        throw new PersysError("INVALID_ARGUMENT", `counter ${a.key} would overflow`, {
          details: [{ path: "by", reason: "takes the counter beyond a safe integer" }],
        });
      this.sql.upsertCounter.run(a.key, value, now + a.ttlSeconds * 1000);
      return value;
    });
  }

  async getCounter(key: string): Promise<number> {
    const name = nameArgument(key, "key");
    return this.run("counter read", () => {
      const row = this.sql.counter.get(name);
      return row && row.expires_at > Date.now() ? row.value : 0;
    });
  }

  async addSample(series: string, timestampMs: number, value: number, options?: SeriesSampleOptions): Promise<void> {
    const a = sampleArguments(series, timestampMs, value, options, this.defaults);
    await this.write("series write", () => {
      const now = Date.now();
      const row = this.sql.series.get(a.series);
      let points = row?.points ?? 0;
      if (row && row.expires_at <= now) {
        this.sql.purgeSamples.run(a.series);
        points = 0;
      }
      if (!this.sql.sampleExists.get(a.series, a.timestampMs)) points += 1;
      this.sql.upsertSample.run(a.series, a.timestampMs, a.value);
      points -= this.sql.trimSamplesBefore.run(a.series, now - a.maxAgeMs).changes;
      if (points > a.maxPoints) {
        this.sql.trimOldestSamples.run(a.series, a.series, points - a.maxPoints);
        points = a.maxPoints;
      }
      this.sql.upsertSeries.run(a.series, points, now + a.maxAgeMs);
    });
  }

  async range(series: string, fromMs: number, toMs: number): Promise<SeriesSample[]> {
    const a = rangeArguments(series, fromMs, toMs);
    return this.run("series read", () => {
      const row = this.sql.series.get(a.series);
      if (!row || row.expires_at <= Date.now()) return [];
      return this.sql.rangeSamples
        .all(a.series, a.fromMs, a.toMs)
        .map((point) => ({ timestampMs: point.ts, value: point.value }));
    });
  }

  /** Deletes what expired. Failures only show in health: the next sweep tries again. */
  private sweep(): void {
    if (this.closed) return;
    try {
      this.run(
        "sweep",
        () =>
          this.db.transaction(() => {
            const now = Date.now();
            this.sql.sweepEntries.run(now);
            this.sql.sweepStreams.run(now);
            this.sql.sweepCounters.run(now);
            this.sql.sweepSamples.run(now);
            this.sql.sweepSeries.run(now);
          })(),
        true,
      );
    } catch {
      // Reported through health by run(); expired data already reads as absent.
    }
  }

  health(): EventStoreHealth {
    return this.healthSignal.get();
  }

  onHealthChange(listener: (health: EventStoreHealth) => void): () => void {
    return this.healthSignal.listen(listener);
  }

  /** Ends every subscription and closes the database. Health ends `degraded` ("closed"). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.flushWrites(); // acknowledged only once committed: commit what is queued before closing
    this.closed = true;
    clearInterval(this.sweeper);
    // Closing a subscription aborts its wait, so its loop ends before the database closes.
    await Promise.all([...this.subscriptions].map((subscription) => subscription.close()));
    this.db.close();
    this.healthSignal.degraded("closed");
  }
}
