import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PersysError } from "@persys/schema";
import { afterAll, describe, expect, it } from "vitest";
import { type EventStoreConfig, openEventStore } from "./open-event-store.js";

const scratch = mkdtempSync(join(tmpdir(), "persys-open-event-store-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const bad = (value: unknown) => value as EventStoreConfig;

describe("openEventStore", () => {
  it.each([
    { name: "no config", config: bad(undefined), paths: ["config"] },
    { name: "unknown kind", config: bad({ kind: "etcd" }), paths: ["kind"] },
    { name: "redis without url", config: bad({ kind: "redis" }), paths: ["url"] },
    { name: "redis with an http url", config: bad({ kind: "redis", url: "http://localhost:6379" }), paths: ["url"] },
    { name: "redis with a malformed url", config: bad({ kind: "redis", url: "redis//x" }), paths: ["url"] },
    {
      name: "redis with a bad prefix",
      config: bad({ kind: "redis", url: "redis://127.0.0.1:1", prefix: "has space" }),
      paths: ["prefix"],
    },
    {
      name: "redis with a negative buffer",
      config: bad({ kind: "redis", url: "redis://127.0.0.1:1", maxBufferedWrites: -1 }),
      paths: ["maxBufferedWrites"],
    },
    {
      name: "redis with an unknown setting",
      config: bad({ kind: "redis", url: "redis://127.0.0.1:1", dataDir: "/tmp" }),
      paths: ["dataDir"],
    },
    { name: "embedded without dataDir", config: bad({ kind: "embedded" }), paths: ["dataDir"] },
    { name: "embedded with empty dataDir", config: bad({ kind: "embedded", dataDir: "" }), paths: ["dataDir"] },
    {
      name: "bad retention defaults",
      config: bad({ kind: "embedded", dataDir: scratch, defaults: { streamMaxLen: 0, typo: 1 } }),
      paths: ["defaults.typo", "defaults.streamMaxLen"],
    },
    {
      name: "several at once",
      config: bad({ kind: "redis", url: 5, pollIntervalMs: 0 }),
      paths: ["pollIntervalMs", "url"],
    },
  ])("rejects $name with INVALID_CONFIG naming the keys", async ({ config, paths }) => {
    const error = (await openEventStore(config).catch((e: unknown) => e)) as PersysError;
    expect(error).toBeInstanceOf(PersysError);
    expect(error.code).toBe("INVALID_CONFIG");
    expect(error.details.map((d) => d.path).sort()).toEqual([...paths].sort());
  });

  it("opens an embedded store, creating its folder", async () => {
    const store = await openEventStore({ kind: "embedded", dataDir: join(scratch, "a", "b") });
    expect(store.kind).toBe("embedded");
    expect(store.health()).toEqual({ state: "ok" });
    await store.close();
  });

  it("fails with STORAGE_ERROR when the data folder cannot be created", async () => {
    const file = join(scratch, "a-file");
    writeFileSync(file, "not a folder");
    const error = (await openEventStore({ kind: "embedded", dataDir: join(file, "events") }).catch(
      (e: unknown) => e,
    )) as PersysError;
    expect(error).toBeInstanceOf(PersysError);
    expect(error.code).toBe("STORAGE_ERROR");
    expect(error.message).toContain("a-file");
  });
});
