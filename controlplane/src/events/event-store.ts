/**
 * The `EventStore`: high-rate operational data (events, reconcile history, retry bookkeeping, usage
 * series) kept out of the state store so etcd holds only current state. Three shapes of data, each
 * bounded by construction:
 *
 * - **streams**: append-only logs of events with time-ordered ids, capped in length, trimmed by age
 *   and expired when idle; read by id or time, and subscribed to live with resumption after an id;
 * - **counters**: integers that expire when idle;
 * - **series**: small time series (one value per timestamp or per resolution bucket) bounded in points
 *   and age.
 *
 * Two implementations share one conformance suite: `RedisEventStore` (production) and
 * `EmbeddedEventStore` (single node, SQLite on local disk). Open one with `openEventStore`.
 */

/** A JSON value, as carried in an event's payload. */
export type EventPayload = null | boolean | number | string | EventPayload[] | { [key: string]: EventPayload };

/**
 * An event id, `<ms>-<seq>` like a Redis stream id: `ms` is the store's clock when the event was
 * appended and `seq` orders events within one millisecond. Ids are unique and strictly increasing
 * within one stream. Compare them with `compareEventIds` (not with `<` on strings: `"5-10"` sorts
 * before `"5-9"`). `"0-0"` is "before every event".
 */
export type EventId = string;

/**
 * What a caller appends. `fields` are flat strings (names start with a letter and use letters,
 * digits, `_`, `.` and `-`, at most 64 names): what one filters and greps by, such as `type`,
 * `workload`, `replica`, `node`, `reason`. `payload` is any JSON value for the structured rest (a
 * diagnosis, numbers). A record is at most 64 KiB of fields plus payload JSON.
 */
export interface EventRecord {
  readonly fields: Readonly<Record<string, string>>;
  readonly payload?: EventPayload;
}

/** An event as stored: its stream, id, the time part of the id, and the appended record. */
export interface StoredEvent {
  readonly stream: string;
  readonly id: EventId;
  /** Milliseconds since the epoch: the store's clock at append (the `ms` part of `id`). */
  readonly timeMs: number;
  readonly fields: Readonly<Record<string, string>>;
  /** The payload that was appended; absent when none was. */
  readonly payload?: EventPayload;
}

/**
 * Bounds applied by one append to its stream (omitted ones come from the store's
 * {@link EventRetentionDefaults}); every stream is always bounded.
 */
export interface EventAppendOptions {
  /** After this append the stream holds at most `maxLen` events, the newest (exact, not approximate). */
  readonly maxLen?: number;
  /** The whole stream expires when no append refreshed it for this many seconds. */
  readonly ttlSeconds?: number;
  /** Events older than this (by the store's clock at this append) are trimmed by this append. */
  readonly maxAgeMs?: number;
}

/**
 * Which events `read` returns. Bounds combine (the tightest wins); all are optional.
 * Time bounds are inclusive, id bounds exclusive so a page's last id is the next page's bound.
 */
export interface EventReadOptions {
  /** Events at or after this time (ms since the epoch). */
  readonly fromMs?: number;
  /** Events at or before this time (ms since the epoch). */
  readonly toMs?: number;
  /** Events strictly after this id. */
  readonly afterId?: EventId;
  /** Events strictly before this id. */
  readonly beforeId?: EventId;
  /** At most this many events (1..10,000; default 1,000). */
  readonly limit?: number;
  /** Newest first (the limit then keeps the newest). Default oldest first. */
  readonly reverse?: boolean;
}

/** Where a subscription starts. */
export interface EventSubscribeOptions {
  /**
   * Deliver events strictly after this id: one id for every stream, or one per stream (streams not
   * named start at `"0-0"`). Omitted: only events appended after `subscribe` resolved.
   */
  readonly afterId?: EventId | Readonly<Record<string, EventId>>;
  /** Aborting ends the subscription like `close()`. */
  readonly signal?: AbortSignal;
}

/**
 * A live feed of events. Iterate it once with `for await`. Within a stream events arrive in id order
 * with no gap and no duplicate, whether they were appended before or after the subscription started
 * and across reconnects of the store; to resume elsewhere, subscribe again with the last delivered
 * id. Events that were trimmed (cap, age, expiry) before they were delivered are not delivered.
 * Iteration ends when `close()` is called, the signal aborts or the store closes; it throws a
 * `PersysError` only for a failure that retrying cannot fix.
 */
export interface EventSubscription extends AsyncIterable<StoredEvent> {
  /** Ends the subscription; a pending iteration step finishes as done. Idempotent. */
  close(): Promise<void>;
}

/** Options for a counter increment. */
export interface CounterOptions {
  /** The counter expires (reads as 0) when no increment refreshed it for this many seconds. */
  readonly ttlSeconds?: number;
}

/** Bounds and resolution applied by one `addSample` to its series (omitted ones from the defaults). */
export interface SeriesSampleOptions {
  /** After this sample the series holds at most this many points, the newest by timestamp. */
  readonly maxPoints?: number;
  /**
   * Points older than this (by the store's clock at this add) are removed by this add, and the whole
   * series expires when no sample was added for this long.
   */
  readonly maxAgeMs?: number;
  /**
   * Downsampling: timestamps are rounded down to a multiple of this and the last sample in a bucket
   * wins (so a repeated sample is idempotent). 1 (the default) keeps every millisecond.
   */
  readonly resolutionMs?: number;
}

/** One point of a series. */
export interface SeriesSample {
  readonly timestampMs: number;
  readonly value: number;
}

/**
 * Whether the store can serve now. `degraded` says why (for health endpoints and logs); what each
 * implementation does while degraded is stated on it.
 */
export type EventStoreHealth = { readonly state: "ok" } | { readonly state: "degraded"; readonly reason: string };

/** The bounds used when a call does not give its own. Every field is positive. */
export interface EventRetentionDefaults {
  /** Default cap of a stream: 10,000 events. */
  readonly streamMaxLen: number;
  /** Default idle expiry of a stream: 7 days. */
  readonly streamTtlSeconds: number;
  /** Default age window of a stream: none beyond the idle expiry (`undefined`). */
  readonly streamMaxAgeMs: number | undefined;
  /** Default idle expiry of a counter: 7 days. */
  readonly counterTtlSeconds: number;
  /** Default cap of a series: 10,000 points. */
  readonly seriesMaxPoints: number;
  /** Default age bound of a series: 7 days. */
  readonly seriesMaxAgeMs: number;
  /** Default resolution of a series: 1 ms (no downsampling). */
  readonly seriesResolutionMs: number;
}

/** The defaults of {@link EventRetentionDefaults}. */
export const defaultEventRetention: EventRetentionDefaults = Object.freeze({
  streamMaxLen: 10_000,
  streamTtlSeconds: 7 * 24 * 3600,
  streamMaxAgeMs: undefined,
  counterTtlSeconds: 7 * 24 * 3600,
  seriesMaxPoints: 10_000,
  seriesMaxAgeMs: 7 * 24 * 3600 * 1000,
  seriesResolutionMs: 1,
});

/**
 * The event store. Names of streams, counters and series are 1–256 characters of letters, digits and
 * `. _ : / @ = + -`, starting with a letter or digit; the three namespaces are separate. Every method
 * validates its arguments first and rejects bad ones with `INVALID_ARGUMENT` naming each field.
 * After `close()`, every method rejects with `UNAVAILABLE` (not retryable).
 */
export interface EventStore {
  /** Which implementation this is. */
  readonly kind: "redis" | "embedded";

  /**
   * Appends one event and applies the stream's bounds; resolves with its id once stored. Ids of
   * appends to one stream increase in call order, also for calls made concurrently.
   */
  append(stream: string, record: EventRecord, options?: EventAppendOptions): Promise<EventId>;

  /**
   * Appends the same event to each of 1–16 `streams`, as `append` to each in order would, and
   * resolves with their ids in that order. One write for all of them (one SQLite transaction, one
   * trip to the event store's thread; pipelined in Redis), so a recorder that keeps a global and a
   * per-object stream pays one call per event. Every name is checked before anything is written.
   */
  appendEach(streams: readonly string[], record: EventRecord, options?: EventAppendOptions): Promise<EventId[]>;

  /** Events of one stream within the bounds, oldest first unless `reverse`; `[]` for an unknown stream. */
  read(stream: string, options?: EventReadOptions): Promise<StoredEvent[]>;

  /**
   * Starts a live feed of one or more streams (see {@link EventSubscription}). Resolves once the
   * start position is fixed: an event appended after that is delivered.
   */
  subscribe(streams: string | readonly string[], options?: EventSubscribeOptions): Promise<EventSubscription>;

  /** Adds `by` (a safe integer, default 1; may be negative) and resolves with the new value. */
  incr(key: string, by?: number, options?: CounterOptions): Promise<number>;

  /** The counter's value; 0 when it does not exist or expired. */
  getCounter(key: string): Promise<number>;

  /**
   * Records `value` (finite) at `timestampMs` (a non-negative integer) and applies the series' bounds.
   * A later sample for the same timestamp (or bucket) replaces the earlier one.
   */
  addSample(series: string, timestampMs: number, value: number, options?: SeriesSampleOptions): Promise<void>;

  /** The points with `fromMs <= timestampMs <= toMs`, oldest first; `[]` for an unknown series. */
  range(series: string, fromMs: number, toMs: number): Promise<SeriesSample[]>;

  /** The current health. */
  health(): EventStoreHealth;

  /**
   * Calls `listener` on every change of health (state or reason). Listener errors are swallowed.
   * Returns a function that removes the listener.
   */
  onHealthChange(listener: (health: EventStoreHealth) => void): () => void;

  /** Ends subscriptions, settles pending writes as the implementation documents, and frees resources. */
  close(): Promise<void>;
}
