import type { EventStore, EventSubscription, StoredEvent } from "@persys/controlplane";
import { expect, it } from "vitest";
import type { StoreSource } from "./event-store.conformance.js";
import { fieldOf, SubscriptionReader, sleep } from "./event-store-helpers.js";

/** Live delivery, resumption after an id, several streams, and ending a subscription. */
export function subscriptionsConformance(stores: StoreSource): void {
  it("delivers events appended after it started, in order, and none from before", async () => {
    const store = await stores.fresh();
    await store.append("s", { fields: { n: "before" } });
    const reader = new SubscriptionReader(await store.subscribe("s"));
    const ids = [];
    for (const n of ["1", "2", "3"]) ids.push(await store.append("s", { fields: { n }, payload: { n: Number(n) } }));
    const events = await reader.take(3);
    expect(events.map((e) => e.id)).toEqual(ids);
    expect(events.map((e) => e.payload)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(await reader.next(300)).toBeUndefined();
    await reader.close();
  });

  it("delivers live events to a subscriber that is already waiting", async () => {
    const store = await stores.fresh();
    const reader = new SubscriptionReader(await store.subscribe("s"));
    expect(await reader.next(200)).toBeUndefined(); // now blocked waiting
    const id = await store.append("s", { fields: { n: "live" } });
    const started = Date.now();
    const event = await reader.next(5_000);
    expect(event?.id).toBe(id);
    expect(Date.now() - started).toBeLessThan(500); // woken by the append, not by a poll
    await reader.close();
  });

  it("replays retained history after 0-0, then continues live", async () => {
    const store = await stores.fresh();
    await store.append("s", { fields: { n: "1" } });
    await store.append("s", { fields: { n: "2" } });
    const reader = new SubscriptionReader(await store.subscribe("s", { afterId: "0-0" }));
    expect(fieldOf(await reader.take(2), "n")).toEqual(["1", "2"]);
    await store.append("s", { fields: { n: "3" } });
    expect(fieldOf(await reader.take(1), "n")).toEqual(["3"]);
    await reader.close();
  });

  it("resumes after the last delivered id with no gap and no duplicate while appends go on", async () => {
    const store = await stores.fresh();
    const total = 300;
    const appended: string[] = [];
    const producer = (async () => {
      for (let i = 0; i < total; i++) {
        appended.push(await store.append("s", { fields: { n: String(i) } }));
        if (i % 10 === 9) await sleep(1);
      }
    })();
    const seen: StoredEvent[] = [];
    let after = "0-0";
    // Three subscriptions in turn, each closed mid-stream and resumed from what it delivered.
    for (const count of [70, 110, total - 180]) {
      const reader = new SubscriptionReader(await store.subscribe("s", { afterId: after }));
      const batch = await reader.take(count, 20_000);
      await reader.close();
      seen.push(...batch);
      after = batch.at(-1)?.id ?? after;
    }
    await producer;
    expect(seen.map((e) => e.id)).toEqual(appended);
    expect(fieldOf(seen, "n")).toEqual(Array.from({ length: total }, (_, i) => String(i)));
  });

  it("follows several streams, keeps each in order and resumes each from its own id", async () => {
    const store = await stores.fresh();
    const a1 = await store.append("a", { fields: { n: "a1" } });
    await store.append("b", { fields: { n: "b1" } });
    const reader = new SubscriptionReader(await store.subscribe(["a", "b"], { afterId: { a: a1 } }));
    const early = await reader.take(1); // b starts at 0-0: b1 is delivered, a1 is not
    expect(fieldOf(early, "n")).toEqual(["b1"]);
    for (const n of ["a2", "b2", "a3", "b3"]) await store.append(n[0] as string, { fields: { n } });
    const live = await reader.take(4);
    expect(
      fieldOf(
        live.filter((e) => e.stream === "a"),
        "n",
      ),
    ).toEqual(["a2", "a3"]);
    expect(
      fieldOf(
        live.filter((e) => e.stream === "b"),
        "n",
      ),
    ).toEqual(["b2", "b3"]);
    expect(await reader.next(200)).toBeUndefined();
    await reader.close();
  });

  const endings: Array<{
    name: string;
    end: (store: EventStore, sub: EventSubscription, abort: AbortController) => unknown;
  }> = [
    { name: "close()", end: (_store, sub) => sub.close() },
    { name: "its abort signal", end: (_store, _sub, abort) => abort.abort() },
    { name: "closing the store", end: (store) => store.close() },
  ];
  it.each(endings)("ends a waiting for-await loop on $name", async ({ end }) => {
    const store = await stores.fresh();
    const abort = new AbortController();
    const sub = await store.subscribe("s", { signal: abort.signal });
    const received: StoredEvent[] = [];
    const loop = (async () => {
      for await (const event of sub) received.push(event);
    })();
    await store.append("s", { fields: { n: "1" } });
    await waitFor(() => received.length === 1, 5_000);
    await sleep(100); // let the loop block on the next event
    const started = Date.now();
    await end(store, sub, abort);
    await loop;
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(fieldOf(received, "n")).toEqual(["1"]);
  });

  it("ends at once when subscribed with an already aborted signal", async () => {
    const store = await stores.fresh();
    await store.append("s", { fields: { n: "1" } });
    const reader = new SubscriptionReader(await store.subscribe("s", { afterId: "0-0", signal: AbortSignal.abort() }));
    expect(await reader.ends(1_000)).toBe(true);
  });
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(10);
  }
}
