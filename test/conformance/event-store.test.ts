/**
 * The event store conformance suite against both implementations: the real Redis of the test run
 * (one key prefix per test) and the embedded store (one folder per test).
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { openEventStore } from "@persys/controlplane";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redisUrl, runDir } from "../support/services.js";
import { describeEventStore } from "./event-store.conformance.js";
import { fieldOf, SubscriptionReader } from "./event-store-helpers.js";

const url = redisUrl();
let admin: Redis;
beforeAll(() => {
  console.info(`[event-store conformance] Redis store runs against ${url}`);
  admin = new Redis(url, { lazyConnect: true });
});
afterAll(async () => {
  await admin.quit();
});

describeEventStore("redis", {
  newLocation: () => `persys-test:${randomUUID()}:`,
  open: (prefix, defaults) =>
    openEventStore({ kind: "redis", url, prefix, ...(defaults ? { defaults } : {}), subscribeBlockMs: 500 }),
  async cleanup(prefix) {
    let cursor = "0";
    do {
      const [next, keys] = await admin.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      if (keys.length > 0) await admin.del(...keys);
      cursor = next;
    } while (cursor !== "0");
  },
});

const base = mkdtempSync(join(runDir(), "event-store-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));

describeEventStore("embedded", {
  newLocation: () => join(base, randomUUID()),
  open: (dataDir, defaults) => openEventStore({ kind: "embedded", dataDir, ...(defaults ? { defaults } : {}) }),
  cleanup: async (dataDir) => rmSync(dataDir, { recursive: true, force: true }),
});

describe("EmbeddedEventStore on a folder shared by two stores", () => {
  it("delivers to a subscriber appends made through the other store (seen by polling)", async () => {
    const dataDir = join(base, randomUUID());
    const writer = await openEventStore({ kind: "embedded", dataDir });
    const watcher = await openEventStore({ kind: "embedded", dataDir, pollIntervalMs: 100 });
    try {
      const reader = new SubscriptionReader(await watcher.subscribe("s"));
      await writer.append("s", { fields: { n: "1" } });
      await writer.append("s", { fields: { n: "2" } });
      expect(fieldOf(await reader.take(2, 2_000), "n")).toEqual(["1", "2"]);
      await reader.close();
    } finally {
      await Promise.all([writer.close(), watcher.close()]);
    }
  });
});
