import { invalid, PersysError } from "@persys/schema";
import { Redis } from "ioredis";
import { type EventIdParts, formatEventId, parseEventId, ZERO_ID } from "../event-id.js";
import {
  type CounterOptions,
  defaultEventRetention,
  type EventAppendOptions,
  type EventId,
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
  type AppendArguments,
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
import { pullSubscription, untilAborted } from "../pull-subscription.js";
import {
  eventFromEntry,
  lowerBound,
  PAYLOAD_FIELD,
  type StreamEntry,
  samplesFromMembers,
  upperBound,
} from "./redis-codec.js";
import { isTransientRedisError, redisCommandError } from "./redis-errors.js";
import { defineScripts, type ScriptedRedis } from "./redis-scripts.js";
import { sleep, untilReady } from "./redis-waits.js";
import { WriteQueue } from "./write-queue.js";

/** Settings of a {@link RedisEventStore}; all but `url` have defaults. */
export interface RedisEventStoreOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://…`. */
  readonly url: string;
  /** Prepended to every key (default `persys:`), so several clusters or tests can share one Redis. */
  readonly prefix?: string;
  /** Bounds for calls that give none. */
  readonly defaults?: EventRetentionDefaults;
  /** Most writes held while Redis is unreachable (default 10,000). */
  readonly maxBufferedWrites?: number;
  /** Longest a held write waits for Redis before it fails with `UNAVAILABLE` (default 60,000 ms). */
  readonly maxWriteWaitMs?: number;
  /** How long `open` waits for the first connection (default 5,000 ms). */
  readonly connectTimeoutMs?: number;
  /** How often an idle connection is checked with PING (default 1,000 ms). */
  readonly probeIntervalMs?: number;
  /** A connection that owes a reply for this long is dropped and reconnected (default 5,000 ms). */
  readonly socketTimeoutMs?: number;
  /** How long one XREAD of a subscription blocks before it is re-issued (default 2,000 ms). */
  readonly subscribeBlockMs?: number;
  /** How long `close` waits for held writes while connected (default 2,000 ms). */
  readonly closeTimeoutMs?: number;
}

const noop = () => {};

/**
 * The production event store, on Redis 6.2+ through ioredis.
 *
 * Layout: a stream is the Redis stream `<prefix>stream:<name>` (fields as given plus `_p`, the
 * payload JSON), a counter the string `<prefix>counter:<name>`, a series the sorted set
 * `<prefix>series:<name>` (score = timestamp, member `<ts>:<value>`). Each write is one Lua script
 * that applies the bounds atomically; subscriptions use XREAD BLOCK, one dedicated connection each.
 *
 * Outages: the connection reconnects by itself (every ≤ 1 s) and health is `degraded` from the
 * moment it drops (a hung server is noticed by the PING probe within `probeIntervalMs +
 * socketTimeoutMs`) until it is ready again. Meanwhile writes (`append`, `incr`, `addSample`) are
 * held in order in a bounded in-memory queue and applied on reconnect, their promises settling then;
 * a write that finds the queue full or waits past `maxWriteWaitMs` fails with `UNAVAILABLE`
 * (retryable). A write in flight when the connection broke is sent again (at least once). Reads and
 * the start of a subscription fail fast with `UNAVAILABLE`; running subscriptions pause and resume
 * after their last delivered id. Nothing is thrown or emitted unhandled.
 */
export class RedisEventStore implements EventStore {
  readonly kind = "redis";
  private readonly redis: ScriptedRedis;
  private readonly writes: WriteQueue;
  private readonly healthSignal: HealthSignal;
  private readonly subscriptions = new Set<EventSubscription>();
  private readonly prefix: string;
  private readonly defaults: EventRetentionDefaults;
  private readonly where: string;
  private readonly probe: NodeJS.Timeout;
  private probing = false;
  private lastError: string | undefined;
  private closed = false;

  private constructor(private readonly options: RedisEventStoreOptions) {
    this.prefix = options.prefix ?? "persys:";
    this.defaults = options.defaults ?? defaultEventRetention;
    this.where = describeAddress(options.url);
    this.healthSignal = new HealthSignal({ state: "degraded", reason: `connecting to Redis at ${this.where}` });
    this.redis = defineScripts(
      new Redis(options.url, {
        lazyConnect: true,
        enableOfflineQueue: false,
        connectionName: "persys-events",
        connectTimeout: options.connectTimeoutMs ?? 5_000,
        socketTimeout: options.socketTimeoutMs ?? 5_000,
        retryStrategy: (attempt) => Math.min(100 * attempt, 1_000),
      }),
    );
    this.writes = new WriteQueue(
      {
        connected: () => this.redis.status === "ready",
        isTransient: isTransientRedisError,
        refused: (error) => redisCommandError(error, "write", this.outage()),
        outage: () => this.outage() || "Redis is not keeping up",
      },
      { maxWrites: options.maxBufferedWrites ?? 10_000, maxWaitMs: options.maxWriteWaitMs ?? 60_000 },
    );
    this.redis.on("error", (error: Error) => {
      this.lastError = error.message;
      if (this.redis.status !== "ready") this.markDegraded();
    });
    this.redis.on("close", () => this.markDegraded());
    this.redis.on("end", () => this.markDegraded());
    this.redis.on("ready", () => {
      this.lastError = undefined;
      if (this.closed) return;
      this.healthSignal.ok();
      this.writes.pump();
    });
    this.probe = setInterval(() => this.ping(), options.probeIntervalMs ?? 1_000);
    this.probe.unref();
  }

  /**
   * Connects and resolves once Redis answers. Rejects with `UNAVAILABLE` (and leaves nothing open)
   * when it does not within `connectTimeoutMs`.
   */
  static async open(options: RedisEventStoreOptions): Promise<RedisEventStore> {
    const store = new RedisEventStore(options);
    try {
      await store.firstConnection(options.connectTimeoutMs ?? 5_000);
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  private firstConnection(timeoutMs: number): Promise<void> {
    this.redis.connect().catch(noop);
    return new Promise((resolve, reject) => {
      const onReady = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.redis.off("ready", onReady);
        const why = this.lastError ?? "no answer";
        reject(new PersysError("UNAVAILABLE", `cannot reach Redis at ${this.where} within ${timeoutMs} ms: ${why}`));
      }, timeoutMs);
      this.redis.once("ready", onReady);
    });
  }

  private markDegraded(): void {
    if (this.closed) return;
    this.healthSignal.degraded(
      this.lastError
        ? `Redis at ${this.where} is unreachable (${this.lastError}); reconnecting`
        : `connection to Redis at ${this.where} lost; reconnecting`,
    );
  }

  /** Why the store is degraded, or "" when it is not. */
  private outage(): string {
    const health = this.healthSignal.get();
    return health.state === "degraded" ? health.reason : "";
  }

  private ping(): void {
    if (this.probing || this.redis.status !== "ready") return;
    this.probing = true;
    // A hung server leaves the PING unanswered: socketTimeout then drops and reconnects the socket.
    this.redis
      .ping()
      .catch(noop)
      .finally(() => {
        this.probing = false;
      });
  }

  private key(kind: "stream" | "counter" | "series", name: string): string {
    return `${this.prefix}${kind}:${name}`;
  }

  private assertOpen(): void {
    if (this.closed) throw new PersysError("UNAVAILABLE", "event store is closed", { retryable: false });
  }

  /** Runs a read: fails fast while degraded, maps failures to typed errors. */
  private async query<T>(what: string, run: () => Promise<T>): Promise<T> {
    this.assertOpen();
    if (this.redis.status !== "ready")
      throw new PersysError("UNAVAILABLE", `event store ${what} failed: ${this.outage() || "not connected"}`);
    try {
      return await run();
    } catch (error) {
      throw redisCommandError(error, what, this.outage());
    }
  }

  async append(stream: string, record: EventRecord, options?: EventAppendOptions): Promise<EventId> {
    this.assertOpen();
    return this.appendChecked(appendArguments(stream, record, options, this.defaults));
  }

  async appendEach(streams: readonly string[], record: EventRecord, options?: EventAppendOptions): Promise<EventId[]> {
    this.assertOpen();
    const all = appendEachArguments(streams, record, options, this.defaults);
    // Submitted in one turn, so ioredis sends them together; each script call keeps its stream's order.
    return Promise.all(all.map((a) => this.appendChecked(a)));
  }

  private appendChecked(a: AppendArguments): Promise<EventId> {
    const args: Array<string | number> = [a.maxLen, a.ttlSeconds, a.maxAgeMs ?? ""];
    for (const [name, value] of a.fields) args.push(name, value);
    args.push(PAYLOAD_FIELD, a.payloadJson ?? "");
    const key = this.key("stream", a.stream);
    return this.writes.submit(() => this.redis.persysAppend(key, ...args));
  }

  async read(stream: string, options?: EventReadOptions): Promise<StoredEvent[]> {
    this.assertOpen();
    const a = readArguments(stream, options);
    if (a.empty) return [];
    const key = this.key("stream", a.stream);
    const start = lowerBound(a.lo);
    const end = upperBound(a.hi);
    const entries = (await this.query("read", () =>
      a.reverse
        ? this.redis.xrevrange(key, end, start, "COUNT", a.limit)
        : this.redis.xrange(key, start, end, "COUNT", a.limit),
    )) as StreamEntry[];
    return entries.map((entry) => eventFromEntry(a.stream, entry));
  }

  async subscribe(streams: string | readonly string[], options?: EventSubscribeOptions): Promise<EventSubscription> {
    this.assertOpen();
    const a = subscribeArguments(streams, options);
    const cursors = a.after ?? (await this.lastIds(a.streams));
    const blockMs = this.options.subscribeBlockMs ?? 2_000;
    const connection = this.redis.duplicate({
      lazyConnect: false,
      enableOfflineQueue: false,
      connectionName: "persys-events-subscriber",
      socketTimeout: blockMs + (this.options.socketTimeoutMs ?? 5_000),
    });
    connection.on("error", noop); // reconnects by itself; the fetch loop waits for it
    const keys = a.streams.map((name) => this.key("stream", name));
    const subscription = pullSubscription({
      cursors,
      signal: a.signal,
      fetch: (at, signal) => this.fetchAfter(connection, a.streams, keys, at, signal, blockMs),
      onEnd: () => {
        connection.disconnect();
        this.subscriptions.delete(subscription);
      },
    });
    this.subscriptions.add(subscription);
    return subscription;
  }

  /** The id of the newest event of each stream (`0-0` for an empty one): where "now" starts. */
  private async lastIds(streams: readonly string[]): Promise<Map<string, EventIdParts>> {
    const newest = await this.query("subscribe", () =>
      Promise.all(streams.map((name) => this.redis.xrevrange(this.key("stream", name), "+", "-", "COUNT", 1))),
    );
    return new Map(streams.map((name, i) => [name, parseEventId(newest[i]?.[0]?.[0]) ?? ZERO_ID]));
  }

  private async fetchAfter(
    connection: Redis,
    streams: readonly string[],
    keys: readonly string[],
    cursors: ReadonlyMap<string, EventIdParts>,
    signal: AbortSignal,
    blockMs: number,
  ): Promise<StoredEvent[]> {
    const streamOf = new Map(keys.map((key, i) => [key, streams[i] as string]));
    while (!signal.aborted) {
      if (connection.status !== "ready") {
        await untilReady(connection, signal);
        continue;
      }
      const ids = streams.map((name) => formatEventId(cursors.get(name) ?? ZERO_ID));
      const pending = connection.xread("COUNT", 256, "BLOCK", blockMs, "STREAMS", ...keys, ...ids);
      pending.catch(noop); // may settle after an abort, when nobody awaits it any more
      try {
        const reply = await untilAborted(pending, signal);
        if (!reply) return [];
        return (reply as Array<[string, StreamEntry[]]>).flatMap(([key, entries]) =>
          entries.map((entry) => eventFromEntry(streamOf.get(key) ?? key, entry)),
        );
      } catch (error) {
        if (signal.aborted) return [];
        if (!isTransientRedisError(error)) throw redisCommandError(error, "subscription read", "");
        await sleep(100, signal);
      }
    }
    return [];
  }

  async incr(key: string, by?: number, options?: CounterOptions): Promise<number> {
    this.assertOpen();
    const a = incrArguments(key, by, options, this.defaults);
    const redisKey = this.key("counter", a.key);
    return this.writes.submit(() => this.redis.persysIncr(redisKey, a.by, a.ttlSeconds));
  }

  async getCounter(key: string): Promise<number> {
    this.assertOpen();
    const name = nameArgument(key, "key");
    const value = await this.query("counter read", () => this.redis.get(this.key("counter", name)));
    return value === null ? 0 : Number(value);
  }

  async addSample(series: string, timestampMs: number, value: number, options?: SeriesSampleOptions): Promise<void> {
    this.assertOpen();
    const a = sampleArguments(series, timestampMs, value, options, this.defaults);
    const key = this.key("series", a.series);
    const member = `${a.timestampMs}:${a.value}`;
    await this.writes.submit(() => this.redis.persysSample(key, a.timestampMs, member, a.maxPoints, a.maxAgeMs));
  }

  async range(series: string, fromMs: number, toMs: number): Promise<SeriesSample[]> {
    this.assertOpen();
    const a = rangeArguments(series, fromMs, toMs);
    const members = await this.query("series read", () =>
      this.redis.zrangebyscore(this.key("series", a.series), a.fromMs, a.toMs),
    );
    return samplesFromMembers(members);
  }

  health(): EventStoreHealth {
    return this.healthSignal.get();
  }

  onHealthChange(listener: (health: EventStoreHealth) => void): () => void {
    return this.healthSignal.listen(listener);
  }

  /**
   * Ends every subscription, waits up to `closeTimeoutMs` for held writes when connected, rejects
   * the writes still held with `UNAVAILABLE`, and disconnects. Health ends `degraded` ("closed").
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.probe);
    await Promise.all([...this.subscriptions].map((subscription) => subscription.close()));
    if (this.redis.status === "ready") await this.writes.drain(this.options.closeTimeoutMs ?? 2_000);
    this.writes.abandon(
      new PersysError("UNAVAILABLE", "event store closed before Redis applied the write", { retryable: false }),
    );
    if (this.redis.status === "ready") await untilAborted(this.redis.quit().catch(noop), AbortSignal.timeout(1_000));
    this.redis.disconnect();
    this.healthSignal.degraded("closed");
  }
}

/** `host:port` of a Redis URL, without credentials; INVALID_CONFIG when it is not a URL. */
function describeAddress(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || "6379"}`;
  } catch {
    throw invalid(
      "INVALID_CONFIG",
      [{ path: "url", reason: "must be a redis:// or rediss:// URL" }],
      "event store config",
    );
  }
}
