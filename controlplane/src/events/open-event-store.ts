import type { EmbeddedEventStoreOptions } from "./embedded/embedded-event-store.js";
import { ThreadedEventStore } from "./embedded/threaded-event-store.js";
import type { EventRetentionDefaults, EventStore } from "./event-store.js";
import { defaultEventRetention } from "./event-store.js";
import { ArgumentCheck, resolveRetention } from "./event-store-arguments.js";
import { RedisEventStore, type RedisEventStoreOptions } from "./redis/redis-event-store.js";

/** Configuration of a Redis event store (see `RedisEventStore` for what each setting does). */
export interface RedisEventStoreConfig extends Omit<RedisEventStoreOptions, "defaults"> {
  readonly kind: "redis";
  /** Overrides of the retention defaults. */
  readonly defaults?: Partial<EventRetentionDefaults>;
}

/** Configuration of an embedded event store (see `EmbeddedEventStore`). */
export interface EmbeddedEventStoreConfig extends Omit<EmbeddedEventStoreOptions, "defaults"> {
  readonly kind: "embedded";
  /** Overrides of the retention defaults. */
  readonly defaults?: Partial<EventRetentionDefaults>;
}

/** Which event store to open, and its settings. */
export type EventStoreConfig = RedisEventStoreConfig | EmbeddedEventStoreConfig;

const redisTunables = [
  "maxBufferedWrites",
  "maxWriteWaitMs",
  "connectTimeoutMs",
  "probeIntervalMs",
  "socketTimeoutMs",
  "subscribeBlockMs",
  "closeTimeoutMs",
] as const;
const embeddedTunables = ["sweepIntervalMs", "pollIntervalMs"] as const;
const prefixPattern = /^[A-Za-z0-9._:/-]{0,64}$/;

/**
 * Opens the event store `config` names. Bad config is rejected with `INVALID_CONFIG` naming every
 * offending key (also unknown keys). A Redis store resolves once Redis answers and rejects with
 * `UNAVAILABLE` when it does not within `connectTimeoutMs`; an embedded one rejects with
 * `STORAGE_ERROR` when its folder or file cannot be opened.
 */
export async function openEventStore(config: EventStoreConfig): Promise<EventStore> {
  const check = new ArgumentCheck("INVALID_CONFIG", "event store config");
  if (typeof config !== "object" || config === null) {
    check.add("config", "must be an object with kind redis or embedded");
    check.done();
  }
  const given = config as unknown as Record<string, unknown>;
  const defaults = resolveRetention(given.defaults, defaultEventRetention, "defaults", check);
  if (given.kind === "redis") {
    allowOnly(check, given, ["kind", "url", "prefix", "defaults", ...redisTunables]);
    const url = given.url;
    if (typeof url !== "string" || !isRedisUrl(url))
      check.add("url", "must be a redis:// or rediss:// URL such as redis://127.0.0.1:6379");
    if (given.prefix !== undefined && (typeof given.prefix !== "string" || !prefixPattern.test(given.prefix)))
      check.add("prefix", "must be at most 64 letters, digits or . _ : / -");
    for (const key of redisTunables) check.positiveInteger(given[key], key, undefined);
    check.done();
    return RedisEventStore.open({ ...(config as RedisEventStoreConfig), defaults });
  }
  if (given.kind === "embedded") {
    allowOnly(check, given, ["kind", "dataDir", "defaults", ...embeddedTunables]);
    if (typeof given.dataDir !== "string" || given.dataDir === "")
      check.add("dataDir", "must be the path of a folder for the event store's files");
    for (const key of embeddedTunables) check.positiveInteger(given[key], key, undefined);
    check.done();
    const { kind: _kind, ...options } = config as EmbeddedEventStoreConfig;
    // SQLite's commits, checkpoints and sweeps run on a worker thread, off the caller's thread.
    return ThreadedEventStore.open({ ...options, defaults });
  }
  check.add("kind", `must be "redis" or "embedded" (got ${JSON.stringify(given.kind) ?? "nothing"})`);
  check.done();
  throw new Error("unreachable");
}

function allowOnly(check: ArgumentCheck, given: Record<string, unknown>, keys: readonly string[]): void {
  for (const key of Object.keys(given))
    if (!keys.includes(key)) check.add(key, `is not a setting of a ${String(given.kind)} event store`);
}

function isRedisUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "redis:" || url.protocol === "rediss:") && url.hostname !== "";
  } catch {
    return false;
  }
}
