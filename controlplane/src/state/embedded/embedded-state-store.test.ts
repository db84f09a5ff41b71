import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PersysError } from "@persys/schema";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { WatchBatch } from "../state-store.js";
import { decodeText, encodeText } from "../value-codec.js";
import { EmbeddedStateStore } from "./embedded-state-store.js";
import { DATABASE_FILE } from "./sqlite-database.js";

const dirs: string[] = [];
const stores: EmbeddedStateStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "persys-embedded-state-"));
  dirs.push(dir);
  return dir;
}

async function open(dataDir: string, historyRevisions?: number): Promise<EmbeddedStateStore> {
  const store = await EmbeddedStateStore.open({ dataDir, ...(historyRevisions ? { historyRevisions } : {}) });
  stores.push(store);
  return store;
}

async function failure(promise: Promise<unknown>): Promise<PersysError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PersysError);
  return error as PersysError;
}

describe("EmbeddedStateStore (embedded-only behaviour)", () => {
  it("starts at revision 1 like etcd, and keeps data and revision across a reopen", async () => {
    const dir = freshDir();
    const store = await open(dir);
    expect(await store.currentRevision()).toBe(1);
    await store.put("a", encodeText("1"));
    const { revision } = await store.put("b", encodeText("2"));
    await store.close();
    const again = await open(dir);
    expect(await again.currentRevision()).toBe(revision);
    expect(decodeText((await again.get("a"))!.value)).toBe("1");
    expect((await again.put("c", encodeText("3"))).revision).toBe(revision + 1);
  });

  it("refuses a second open of the same data dir while the first holds it", async () => {
    const dir = freshDir();
    await open(dir);
    const error = await failure(EmbeddedStateStore.open({ dataDir: dir }));
    expect(error.code).toBe("STORAGE_ERROR");
    expect(error.message).toMatch(/in use by another process/);
  });

  it("keeps only the last historyRevisions revisions for watches; older ones are COMPACTED", async () => {
    const store = await open(freshDir(), 16);
    const revisions: number[] = [];
    for (let i = 0; i < 40; i++) revisions.push((await store.put(`k${i % 3}`, encodeText(String(i)))).revision);
    const current = revisions.at(-1)!;
    const tooOld = await failure(store.watch("", { afterRevision: revisions[0]!, onEvents: () => {} }));
    expect(tooOld.code).toBe("COMPACTED");
    // The last 16 revisions are always kept.
    const batches: WatchBatch[] = [];
    const watch = await store.watch("", { afterRevision: current - 16, onEvents: (b) => batches.push(b) });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await watch.cancel();
    expect(batches.flatMap((b) => b.events.map((e) => e.revision))).toEqual(revisions.slice(-16));
  });

  it("leases survive a reopen with a full TTL, and still expire afterwards", async () => {
    const dir = freshDir();
    const store = await open(dir);
    const lease = await store.grantLease(1);
    await store.put("node/a", encodeText("up"), { lease: lease.id });
    await store.close();
    await new Promise((resolve) => setTimeout(resolve, 1200)); // longer than the TTL, while closed
    const again = await open(dir);
    expect((await again.get("node/a"))?.lease).toBe(lease.id);
    expect((await again.leaseTimeToLive(lease.id))?.keys).toEqual(["node/a"]);
    const deadline = Date.now() + 5000;
    while ((await again.get("node/a")) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await again.get("node/a")).toBeUndefined();
    expect(await again.leaseTimeToLive(lease.id)).toBeUndefined();
  });

  it("refuses a data dir written by a newer layout", async () => {
    const dir = freshDir();
    const store = await open(dir);
    await store.close();
    const db = new Database(join(dir, DATABASE_FILE));
    db.prepare("UPDATE meta SET value = 99 WHERE name = 'schema'").run();
    db.close();
    const error = await failure(EmbeddedStateStore.open({ dataDir: dir }));
    expect([error.code, error.retryable]).toEqual(["STORAGE_ERROR", false]);
    expect(error.message).toMatch(/newer Persys/);
  });

  it("a value passed in is copied: changing the caller's buffer later changes nothing stored", async () => {
    const store = await open(freshDir());
    const value = Buffer.from("abc");
    await store.put("k", value);
    value.write("xyz");
    expect(decodeText((await store.get("k"))!.value)).toBe("abc");
  });
});
