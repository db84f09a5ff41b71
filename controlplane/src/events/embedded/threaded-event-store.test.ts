import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { ThreadedEventStore } from "./threaded-event-store.js";

const open = () => ThreadedEventStore.open({ dataDir: mkdtempSync(join(tmpdir(), "threaded-events-")) });
const workerOf = (store: ThreadedEventStore) => (store as unknown as { worker: Worker }).worker;

describe("the embedded event store on a worker thread", () => {
  it("keeps the order of appends made in one turn and reads them back", async () => {
    const store = await open();
    try {
      const ids = await Promise.all(
        Array.from({ length: 50 }, (_, i) => store.append("s", { fields: { n: String(i) } })),
      );
      expect([...ids].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }))).toEqual(ids);
      const events = await store.read("s");
      expect(events.map((e) => e.fields.n)).toEqual(Array.from({ length: 50 }, (_, i) => String(i)));
      expect(store.health()).toEqual({ state: "ok" });
    } finally {
      await store.close();
    }
  });

  it("turns degraded and fails calls with STORAGE_ERROR when its worker dies", async () => {
    const store = await open();
    const changes: string[] = [];
    store.onHealthChange((h) => changes.push(h.state));
    await workerOf(store).terminate();
    await expect(store.append("s", { fields: { n: "1" } })).rejects.toMatchObject({
      code: "STORAGE_ERROR",
      message: expect.stringContaining("worker exited"),
    });
    expect(store.health()).toMatchObject({ state: "degraded", reason: expect.stringContaining("worker exited") });
    expect(changes).toEqual(["degraded"]);
    await store.close();
  });

  it("rejects a pending call with STORAGE_ERROR when the worker dies under it, and calls after close with UNAVAILABLE", async () => {
    const store = await open();
    const pending = store.read("s");
    await workerOf(store).terminate();
    await expect(pending).rejects.toMatchObject({ code: "STORAGE_ERROR" });
    const other = await open();
    await other.close();
    await expect(other.append("s", { fields: {} })).rejects.toMatchObject({ code: "UNAVAILABLE" });
    expect(other.health()).toEqual({ state: "degraded", reason: "closed" });
    await store.close();
  });

  it("ends a waiting subscription at once when it is closed", async () => {
    const store = await open();
    try {
      const subscription = await store.subscribe("quiet");
      const next = subscription[Symbol.asyncIterator]().next();
      const started = Date.now();
      await subscription.close();
      expect((await next).done).toBe(true);
      expect(Date.now() - started).toBeLessThan(500);
    } finally {
      await store.close();
    }
  });
});
