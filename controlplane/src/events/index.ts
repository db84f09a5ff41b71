/**
 * The event store: events, counters and small time series, on Redis or embedded SQLite.
 *
 * ```ts
 * import { openEventStore } from "@persys/controlplane";
 * const events = await openEventStore({ kind: "embedded", dataDir: "/var/lib/persys/events" });
 * const id = await events.append("workload/web", { fields: { type: "Scheduled", node: "n1" } });
 * for await (const event of await events.subscribe("workload/web", { afterId: id })) console.log(event);
 * ```
 */
export { EmbeddedEventStore, type EmbeddedEventStoreOptions } from "./embedded/embedded-event-store.js";
export { compareEventIds, type EventIdParts, eventIdTime, parseEventId } from "./event-id.js";
export type {
  CounterOptions,
  EventAppendOptions,
  EventId,
  EventPayload,
  EventReadOptions,
  EventRecord,
  EventRetentionDefaults,
  EventStore,
  EventStoreHealth,
  EventSubscribeOptions,
  EventSubscription,
  SeriesSample,
  SeriesSampleOptions,
  StoredEvent,
} from "./event-store.js";
export { defaultEventRetention } from "./event-store.js";
export {
  DEFAULT_EVENT_READ_LIMIT,
  MAX_EVENT_FIELDS,
  MAX_EVENT_READ_LIMIT,
  MAX_EVENT_RECORD_BYTES,
} from "./event-store-arguments.js";
export {
  type EmbeddedEventStoreConfig,
  type EventStoreConfig,
  openEventStore,
  type RedisEventStoreConfig,
} from "./open-event-store.js";
export { RedisEventStore, type RedisEventStoreOptions } from "./redis/redis-event-store.js";
