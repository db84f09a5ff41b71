/**
 * The one conformance suite of the `EventStore`: every implementation runs it through
 * `describeEventStore(name, fixture)` and must behave identically.
 */
import type { EventRetentionDefaults, EventStore } from "@persys/controlplane";
import { afterEach, describe } from "vitest";
import { countersAndSeriesConformance } from "./event-store-counters-series.conformance.js";
import { errorsConformance } from "./event-store-errors.conformance.js";
import { streamsConformance } from "./event-store-streams.conformance.js";
import { subscriptionsConformance } from "./event-store-subscriptions.conformance.js";

/** How a suite gets stores of one implementation. */
export interface EventStoreFixture {
  /** A location (Redis key prefix, data folder) no other test uses. */
  newLocation(): string;
  /** Opens a store on `location`; stores on the same location share their data. */
  open(location: string, defaults?: Partial<EventRetentionDefaults>): Promise<EventStore>;
  /** Removes what a test left at `location`. */
  cleanup?(location: string): Promise<void>;
}

/** Stores for one test, closed (and their locations cleaned) after it. */
export interface StoreSource {
  /** A store on a fresh location. */
  fresh(defaults?: Partial<EventRetentionDefaults>): Promise<EventStore>;
  /** Another store on the location of `store` (e.g. after closing it). */
  reopen(store: EventStore, defaults?: Partial<EventRetentionDefaults>): Promise<EventStore>;
}

function storeSource(fixture: EventStoreFixture): StoreSource {
  const open: EventStore[] = [];
  const where = new Map<EventStore, string>();
  const locations = new Set<string>();
  afterEach(async () => {
    await Promise.all(open.splice(0).map((store) => store.close()));
    for (const location of locations) await fixture.cleanup?.(location);
    locations.clear();
    where.clear();
  });
  const openAt = async (location: string, defaults?: Partial<EventRetentionDefaults>) => {
    locations.add(location);
    const store = await fixture.open(location, defaults);
    open.push(store);
    where.set(store, location);
    return store;
  };
  return {
    fresh: (defaults) => openAt(fixture.newLocation(), defaults),
    reopen: (store, defaults) => {
      const location = where.get(store);
      if (!location) throw new Error("reopen: not a store of this test");
      return openAt(location, defaults);
    },
  };
}

/** Declares the conformance suite for one implementation. */
export function describeEventStore(name: string, fixture: EventStoreFixture): void {
  describe(`EventStore conformance: ${name}`, () => {
    const stores = storeSource(fixture);
    describe("streams", () => streamsConformance(stores));
    describe("subscriptions", () => subscriptionsConformance(stores));
    describe("counters and series", () => countersAndSeriesConformance(stores));
    describe("arguments, health and lifecycle", () => errorsConformance(stores));
  });
}
